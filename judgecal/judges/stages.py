"""One collection stage of one shard, from config dictionaries to a calls table (used by the
workflow's rule scripts, which only read and write files)."""
from __future__ import annotations

import logging
import pandas as pd

from . import protocols
from .cache import CallCache, spent
from .endpoints import Endpoint
from .prompts import Prompt
from .runner import Budget, RetryPolicy, run_calls

log = logging.getLogger("judgecal.judges")


def run_shard(calls, endpoint: Endpoint, prompt: Prompt, settings: dict, collection: str,
              stage: str, shard: int, label: str) -> pd.DataFrame:
    """Make (or find in the cache) every call of a shard and return the calls table.

    ``settings``: the config's ``collection`` block (cache_dir, max_cost, progress_interval,
    retries). Raises :class:`~judgecal.judges.runner.Stopped` when max_cost stops the shard.
    """
    cache = CallCache.for_shard(settings["cache_dir"], collection, stage, endpoint.name, shard)
    budget = Budget(settings["max_cost"], spent(settings["cache_dir"], collection))
    if budget.reached:
        log.warning("%s: the collection has already spent $%.4f of max_cost $%s", label,
                    budget.spent, budget.limit)
    to_send = protocols.sendable(calls)
    results = run_calls(to_send, endpoint, cache, prompt.answer,
                        policy=RetryPolicy(**settings["retries"]), budget=budget,
                        progress_interval=settings["progress_interval"], label=label,
                        seed=shard)
    for line in server_quirks(results, endpoint):
        log.warning("%s: %s", label, line)
    table = protocols.calls_table(calls, {r["key"]: r for r in results})
    return table


def server_quirks(results: list[dict], endpoint: Endpoint) -> list[str]:
    """What the server did that a user should know, from the replies of this run: another model
    answered than the one asked for, replies without usage (their tokens and cost count as 0),
    finish reasons other than stop / length."""
    new = [r for r in results if not r.get("cached") and "finish_reason" in r]
    lines = []
    served = sorted({str(r.get("served_model")) for r in new} - {endpoint.model, "None"})
    if served:
        lines.append(f"the server answered as model {served}, not {endpoint.model!r} as asked "
                     "(llama.cpp and some proxies serve whatever model they loaded); the tables "
                     "record the model asked for and the calls tables `served_model`")
    unreported = sum(not r.get("usage_reported", True) for r in new)
    if unreported:
        lines.append(f"{unreported} of {len(new)} replies carried no usage: their tokens and cost "
                     "count as 0 in usage.csv and against max_cost")
    other = sorted({str(r["finish_reason"]) for r in new} - {"stop", "length"})
    if other:
        lines.append(f"finish reason(s) {other}: answers parsed as they are (only `length` "
                     "marks a reply as cut off)")
    return lines


def read_calls(paths) -> pd.DataFrame:
    """Shard call tables stacked in the given (sorted) order."""
    frames = [pd.read_parquet(p) for p in paths]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
