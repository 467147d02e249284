"""One collection stage of one shard, from config dictionaries to a calls table (used by the
workflow's rule scripts, which only read and write files)."""
from __future__ import annotations

import logging
import pandas as pd

from . import protocols
from .cache import CallCache
from .endpoints import Endpoint
from .ledger import Ledger
from .plan import message_tokens
from .prompts import Prompt
from .runner import Budget, RetryPolicy
from .sending import CallSet, run_call_sets

log = logging.getLogger("polyjudge.judges")


def shared_budget(settings: dict, collection: str, endpoints: list[Endpoint]) -> Budget:
    """The collection's ``max_cost`` budget, shared by all its shard jobs through the ledger
    (:mod:`polyjudge.judges.ledger`); each call reserves the plan's estimate of its cost (at batch
    prices for an endpoint with ``batch``)."""
    limit, cache_dir = settings["max_cost"], settings["cache_dir"]
    cpt = settings["chars_per_token"]
    if limit is None:
        return Budget(None)
    ledger = Ledger(cache_dir, collection, limit)
    by_name = {e.name: e for e in endpoints}

    def estimate(call) -> float:
        endpoint = by_name[call.meta["endpoint"]]
        return endpoint.cost(message_tokens(call.messages, cpt),
                             call.meta["expected_output_tokens"], batch=endpoint.batch)

    return Budget(limit, estimate=estimate, ledger=ledger)


def shard_set(calls, endpoint: Endpoint, prompt: Prompt, settings: dict, collection: str,
              stage: str, shard: int, label: str, budget: Budget) -> CallSet:
    """The sendable calls of one shard with its cache (own file, peers read) and the budget."""
    cache = CallCache.for_shard(settings["cache_dir"], collection, stage, endpoint.name, shard)
    return CallSet(protocols.sendable(calls), endpoint, cache, prompt.answer, budget, label, shard)


def run_shard(calls, endpoint: Endpoint, prompt: Prompt, settings: dict, collection: str,
              stage: str, shard: int, label: str) -> pd.DataFrame:
    """Make (or find in the cache) every call of a shard and return the calls table.

    ``settings``: the config's ``collection`` block (cache_dir, max_cost, progress_interval,
    retries). Raises :class:`~polyjudge.judges.runner.Stopped` when max_cost stops the shard.
    """
    budget = shared_budget(settings, collection, [endpoint])
    if budget.reached:
        log.warning("%s: the collection has already spent $%.4f of max_cost $%s", label,
                    budget.spent, budget.limit)
    job = shard_set(calls, endpoint, prompt, settings, collection, stage, shard, label, budget)
    results = run_call_sets([job], policy=RetryPolicy(**settings["retries"]),
                            progress_interval=settings["progress_interval"])[0]
    for line in server_quirks([r.to_dict(with_cached=True) for r in results], endpoint):
        log.warning("%s: %s", label, line)
    return protocols.calls_table(calls, {r.key: r for r in results})


def server_quirks(results: list[dict], endpoint: Endpoint) -> list[str]:
    """What the server did that a user should know, from the replies of this run (plain records,
    :meth:`~polyjudge.judges.records.CallResult.to_dict`): another model
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
