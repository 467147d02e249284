"""Making sets of calls (judges, shards) at once, each one by one (:mod:`polyjudge.judges.runner`)
or, for an endpoint with ``batch: true``, in provider batch jobs (:mod:`polyjudge.judges.batch`),
with one stop for all: a signal (SIGTERM, SIGINT), a budget or an endpoint error in any set stops
every set once its calls in flight are done and cached (running batch jobs go on at the
provider and are re-attached by the next run); then the first error is raised."""
from __future__ import annotations

import asyncio
import contextlib
import signal
from dataclasses import dataclass

from .batch import run_batches
from .cache import CallCache
from .endpoints import Endpoint
from .parse import AnswerFormat
from .records import CallResult
from .runner import Budget, Call, Channel, EndpointError, RetryPolicy, Stop, execute, make_client


@contextlib.contextmanager
def _stop_on_signals(stop: Stop):
    """SIGTERM / SIGINT set ``stop`` (calls in flight finish and are cached) instead of killing."""
    loop = asyncio.get_running_loop()
    signals = (signal.SIGTERM, signal.SIGINT)
    for sig in signals:
        try:
            loop.add_signal_handler(sig, lambda s=sig: stop.set(signal.Signals(s).name))
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    try:
        yield
    finally:
        for sig in signals:
            try:
                loop.remove_signal_handler(sig)
            except (NotImplementedError, RuntimeError, ValueError):
                pass


@dataclass
class CallSet:
    """Calls to one endpoint with their cache: one of the sets :func:`run_call_sets` makes."""
    calls: list[Call]
    endpoint: Endpoint
    cache: CallCache
    answer: AnswerFormat
    budget: Budget | None = None
    label: str = ""
    seed: int = 0


def run_call_sets(sets: list[CallSet], *, policy: RetryPolicy = RetryPolicy(),
                  progress_interval: float = 30.0, client=None) -> list[list[CallResult]]:
    """Results of each set (as :func:`run_calls`, as records), all sets made at once in one
    event loop.

    One stop for all: a signal, a budget or an endpoint error in any set stops every set once
    its calls in flight are done and cached; then the first error is raised.
    """
    async def main():
        stop = Stop()

        async def one(job: CallSet):
            own = client or (make_client(job.endpoint)
                             if any(job.cache.get(c.key) is None for c in job.calls)
                             or job.endpoint.batch else None)
            channel = Channel(job.endpoint, job.cache, job.answer, job.budget or Budget(None),
                              own, stop, policy, job.label or job.endpoint.name,
                              progress_interval, job.seed)
            try:
                if job.endpoint.batch:
                    return await run_batches(job.calls, channel,
                                             lambda calls: execute(calls, channel))
                return await execute(job.calls, channel)
            except EndpointError:
                stop.set(f"endpoint {job.endpoint.name!r} failed")
                raise
            finally:
                if client is None and own is not None:
                    await own.close()

        with _stop_on_signals(stop):
            return await asyncio.gather(*(one(job) for job in sets), return_exceptions=True)

    try:
        outcomes = asyncio.run(main())
    finally:
        for job in sets:
            job.cache.close()
    errors = [o for o in outcomes if isinstance(o, BaseException)]
    if errors:
        raise next((e for e in errors if isinstance(e, EndpointError)), errors[0])
    return outcomes


def run_calls(calls: list[Call], endpoint: Endpoint, cache: CallCache, answer: AnswerFormat, *,
              policy: RetryPolicy = RetryPolicy(), budget: Budget | None = None,
              progress_interval: float = 30.0, label: str = "", client=None, seed: int = 0
              ) -> list[dict]:
    """Results of ``calls`` in order (cached, new, or failed), one by one as
    :mod:`polyjudge.judges.runner` says, or in batch jobs for an endpoint with ``batch``.

    Each result is a plain record (:meth:`~polyjudge.judges.records.CallResult.to_dict`): the
    cache record's fields plus ``cached``; ``status`` is ok, parse_failure or failed. ``seed``
    seeds the retry jitter.
    """
    results = run_call_sets([CallSet(calls, endpoint, cache, answer, budget, label, seed)],
                            policy=policy, progress_interval=progress_interval, client=client)[0]
    return [r.to_dict(with_cached=True) for r in results]
