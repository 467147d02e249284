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
from .runner import Budget, CallSet, RetryPolicy, run_call_sets

log = logging.getLogger("judgecal.judges")


def shared_budget(settings: dict, collection: str, endpoints: list[Endpoint]) -> Budget:
    """The collection's ``max_cost`` budget, shared by all its shard jobs through the ledger
    (:mod:`judgecal.judges.ledger`); each call reserves the plan's estimate of its cost."""
    limit, cache_dir, cpt = settings["max_cost"], settings["cache_dir"], settings["chars_per_token"]
    if limit is None:
        return Budget(None)
    ledger = Ledger(cache_dir, collection, limit)
    by_name = {e.name: e for e in endpoints}

    def estimate(call) -> float:
        endpoint = by_name[call.meta["endpoint"]]
        return endpoint.cost(message_tokens(call.messages, cpt),
                             call.meta["expected_output_tokens"])

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
    retries). Raises :class:`~judgecal.judges.runner.Stopped` when max_cost stops the shard.
    """
    budget = shared_budget(settings, collection, [endpoint])
    if budget.reached:
        log.warning("%s: the collection has already spent $%.4f of max_cost $%s", label,
                    budget.spent, budget.limit)
    job = shard_set(calls, endpoint, prompt, settings, collection, stage, shard, label, budget)
    results = run_call_sets([job], policy=RetryPolicy(**settings["retries"]),
                            progress_interval=settings["progress_interval"])[0]
    return protocols.calls_table(calls, {r["key"]: r for r in results})


def read_calls(paths) -> pd.DataFrame:
    """Shard call tables stacked in the given (sorted) order."""
    frames = [pd.read_parquet(p) for p in paths]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
