"""The cost plan: calls per endpoint and stage, estimated tokens and cost, before any call.

Input tokens are estimated from the rendered prompts (characters / ``chars_per_token`` plus
``MESSAGE_OVERHEAD`` per message; about 4 characters per token for English, fewer for Chinese,
so translated conditions, estimated from the English texts, are an underestimate there). Output
tokens come from the prompt's ``expected_output_tokens``, or for translations from the length of
the text being translated. ``batch_cost_usd`` is what the same calls cost in provider batch jobs
(the endpoint's batch prices); for an endpoint with ``batch``, ``batches`` counts its batch jobs
(at least one per shard) and ``batch_wait_hours`` is the longest wait, the completion window
(the shards' batches run at the same time). Pure: counting needs no server.
"""
from __future__ import annotations

import math

import pandas as pd

from .endpoints import Endpoint

MESSAGE_OVERHEAD = 4
COST_COLUMNS = ["cost_usd", "batch_cost_usd"]
PLAN_COLUMNS = ["endpoint", "model", "stage", "calls", "input_tokens", "output_tokens",
                *COST_COLUMNS, "batches", "batch_wait_hours"]
TOTAL_COLUMNS = ["endpoints", "calls", "input_tokens", "output_tokens", *COST_COLUMNS, "batches",
                 "batch_wait_hours"]


def estimate_tokens(text: str, chars_per_token: float = 4.0) -> int:
    return math.ceil(len(text) / chars_per_token)


def message_tokens(messages: list[dict], chars_per_token: float = 4.0) -> int:
    return sum(estimate_tokens(m["content"], chars_per_token) + MESSAGE_OVERHEAD
               for m in messages)


def window_hours(window: str) -> float:
    """Hours of a completion window such as ``24h`` (NaN when it is not written in hours)."""
    text = str(window).strip().lower()
    try:
        return float(text[:-1]) if text.endswith("h") else float("nan")
    except ValueError:
        return float("nan")


def plan_table(calls, endpoints: dict[str, Endpoint], chars_per_token: float = 4.0,
               shards: int = 1) -> pd.DataFrame:
    """One row per (endpoint, stage); columns :data:`PLAN_COLUMNS` (totals: :func:`plan_totals`).

    ``calls``: :class:`~polyjudge.judges.runner.Call` objects whose meta has ``stage``,
    ``endpoint`` and ``expected_output_tokens``; calls without messages (no input) are left out.
    Every call counts, so the stand-in texts of translated conditions count as the calls they
    stand for (a request repeated verbatim is sent once: the plan is an upper bound there).
    """
    unique = [call for call in calls if call.messages is not None]
    rows = pd.DataFrame([{"endpoint": c.meta["endpoint"], "stage": c.meta["stage"],
                          "input_tokens": message_tokens(c.messages, chars_per_token),
                          "output_tokens": int(c.meta["expected_output_tokens"])}
                         for c in unique], columns=["endpoint", "stage", "input_tokens",
                                                    "output_tokens"])
    table = (rows.groupby(["endpoint", "stage"], sort=False)
             .agg(calls=("input_tokens", "size"), input_tokens=("input_tokens", "sum"),
                  output_tokens=("output_tokens", "sum")).reset_index())
    table.insert(1, "model", table["endpoint"].map({n: e.model for n, e in endpoints.items()}))
    tokens = list(zip(table["endpoint"], table["input_tokens"], table["output_tokens"]))
    table["cost_usd"] = [endpoints[e].cost(i, o) for e, i, o in tokens]
    table["batch_cost_usd"] = [endpoints[e].cost(i, o, batch=True) for e, i, o in tokens]
    batch = table["endpoint"].map(lambda e: endpoints[e].batch)
    per_shard = [math.ceil(n / shards) for n in table["calls"]]
    table["batches"] = [min(shards, n) * math.ceil(k / endpoints[e].batch_max_requests)
                        if b else 0
                        for e, n, k, b in zip(table["endpoint"], table["calls"], per_shard, batch)]
    table["batch_wait_hours"] = [window_hours(endpoints[e].batch_completion_window) if b else 0.0
                                 for e, b in zip(table["endpoint"], batch)]
    return table[PLAN_COLUMNS]


def plan_totals(table: pd.DataFrame) -> pd.DataFrame:
    """The plan's one totals row (columns :data:`TOTAL_COLUMNS`): endpoints, calls, tokens,
    costs summed over the rows of :func:`plan_table` (written apart, as ``plan_total.csv``)."""
    return pd.DataFrame([{"endpoints": int(table["endpoint"].nunique()),
                          "calls": int(table["calls"].sum()),
                          "input_tokens": int(table["input_tokens"].sum()),
                          "output_tokens": int(table["output_tokens"].sum()),
                          **{c: float(table[c].sum()) for c in COST_COLUMNS},
                          "batches": int(table["batches"].sum()),
                          "batch_wait_hours": float(table["batch_wait_hours"].max()
                                                    if len(table) else 0.0)}],
                        columns=TOTAL_COLUMNS)


def readable_cost(value: float) -> float:
    """A cost rounded for people: 4 significant digits, but never coarser than cents
    (0.9093000000000001 -> 0.9093, 0.000123456 -> 0.0001235, 1953.123 -> 1953.12)."""
    if not math.isfinite(value) or value == 0:
        return value
    return round(value, max(2, 3 - math.floor(math.log10(abs(value)))))
