"""Calling an endpoint one by one: bounded concurrency, a request rate, retries, the cache and a
cost cap (:mod:`polyjudge.judges.sending` makes sets of calls this way or in batch jobs).

Everything it decides is a pure function tested without a server (:func:`backoff_delay`,
:func:`progress_line`); :func:`execute` is the shell.

* Each call is looked up in the cache first; only missing calls are sent.
* At most ``max_concurrency`` calls are in flight, started at most ``requests_per_minute``.
* 429, 408/409, 5xx (:func:`transient`), timeouts and connection errors are retried up to
  ``max_attempts`` times with exponential backoff and jitter, waiting at least the server's
  ``Retry-After``. 401/403/404 stop the shard at once (a wrong key, model or URL would fail
  every call). Any other error, or retries used up, makes a ``failed`` result: recorded, never
  cached, never a verdict.
* A reply cut off at ``max_tokens`` (finish reason ``length``) is flagged ``truncated`` and is a
  ``parse_failure`` (never scored). The model the server says answered (``served_model``) and
  whether the reply carried ``usage`` are recorded.
* ``Budget``: each new call first reserves its estimated cost against ``max_cost`` (in the
  collection's shared ledger, :mod:`polyjudge.judges.ledger`, so the cap holds across shards);
  once nothing fits no call starts, calls in flight finish and are cached, and :class:`Stopped`
  is raised. SIGTERM / SIGINT (a cluster's time limit, Ctrl-C) stop the same way; a call
  waiting to be retried gives up at once (it stays uncached and counts as not made).
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from .cache import CallCache
from .endpoints import Endpoint
from .parse import FAILED, AnswerFormat
from .records import CallResult

log = logging.getLogger("polyjudge.judges")
for _name in ("httpx", "httpx2", "openai"):  # one line per request would drown the progress lines
    logging.getLogger(_name).setLevel(logging.WARNING)


@dataclass(frozen=True)
class Call:
    """One request: its cache key, the rendered messages, and what it is (meta, for tables)."""
    key: str
    messages: list
    response_format: dict | None = None
    meta: dict = field(default_factory=dict)


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 6        # tries per call, the first included
    base_delay: float = 1.0      # seconds; the ceiling doubles with every retry ...
    max_delay: float = 60.0      # ... up to this; a Retry-After above it is cut to it


class Stopped(RuntimeError):
    """The run stopped before every call was made (cost cap or signal); finished calls are
    cached."""


UNREACHABLE_ERRORS = ("APIConnectionError", "APITimeoutError")
"""Failures that mean the endpoint cannot be reached at all (no HTTP answer)."""


class EndpointError(RuntimeError):
    """A configuration error that would fail every call (401, 403, 404, or no server at all)."""


def transient(status: int | None) -> bool:
    """Whether an HTTP status says the same request may succeed later: 408 (timeout), 409
    (conflict), 429 (rate limit) and every 5xx. The one rule for a call sent alone (where a
    timeout or a lost connection, which have no status, are retried too) and for a request in a
    batch job's error file."""
    return status is not None and (status in (408, 409, 429) or status >= 500)


def backoff_delay(attempt: int, policy: RetryPolicy, u: float, retry_after: float | None = None
                  ) -> float:
    """Seconds to wait after failed try number ``attempt`` (0-based), ``u`` uniform in [0, 1).

    Exponential backoff with equal jitter: ``c = min(max_delay, base_delay 2^attempt)``, wait
    ``c/2 (1 + u)``; at least ``min(retry_after, max_delay)`` when the server sent Retry-After.
    """
    ceiling = min(policy.max_delay, policy.base_delay * 2.0 ** attempt)
    delay = ceiling / 2 * (1 + u)
    if retry_after is not None and retry_after > 0:
        delay = max(delay, min(float(retry_after), policy.max_delay))
    return delay


def progress_line(label: str, done: int, total: int, cached: int, failed: int, parse_failures: int,
                  elapsed: float, new: int) -> str:
    """``label: done/total calls (cached c), r calls/s, f failed, p unparseable, ETA s``; the rate
    counts calls sent in this run, so the time left is for the calls still to send."""
    rate = new / elapsed if elapsed > 0 else 0.0
    left = total - done
    eta = f"{left / rate:.0f} s" if rate > 0 else ("0 s" if left == 0 else "unknown")
    shown = f"{rate:.1f}" if rate >= 1 or rate == 0 else f"{rate:.2g}"  # a slow local server
    return (f"{label}: {done}/{total} calls ({cached} cached), {shown} calls/s, {failed} "
            f"failed, {parse_failures} unparseable, ETA {eta}")


class Budget:
    """Spend of a collection against its ``max_cost`` (None: no cap), in USD.

    Each call *reserves* its estimated cost (``estimate(call)``) before it starts and is granted
    only while spend + open reservations + estimate stay within the cap; the reply *settles* it
    with the actual cost, a failed or unmade call *releases* it. With a
    :class:`~polyjudge.judges.ledger.Ledger` the reservations are shared by every shard job of the
    collection, so the cap holds across parallel shards.
    """

    def __init__(self, limit: float | None, spent: float = 0.0, estimate=None, ledger=None):
        self.limit, self._spent, self.ledger = limit, spent, ledger
        self.estimate = estimate or (lambda call: 0.0)
        self._open: dict = {}

    @property
    def spent(self) -> float:
        return self.ledger.spent if self.ledger is not None else self._spent

    def add(self, cost: float) -> None:
        self._spent += cost

    def reserve(self, call) -> object | None:
        """A ticket for ``call``, or None when the cap leaves no room for it."""
        return self.reserve_cost(float(self.estimate(call)))

    def reserve_cost(self, estimate: float, lasting: bool = False) -> object | None:
        """A ticket for ``estimate`` USD (``lasting``: a batch job's, see the ledger), or None."""
        if self.limit is None:
            return True
        if self.ledger is not None:
            return self.ledger.reserve(estimate, lasting)
        committed = self._spent + sum(self._open.values())
        if committed >= self.limit or committed + estimate > self.limit:
            return None
        ticket = object()
        self._open[ticket] = estimate
        return ticket

    def settle(self, ticket, cost: float) -> None:
        if self.ledger is not None and self.limit is not None:
            self.ledger.settle(ticket, cost)
        self._open.pop(ticket, None)
        self.add(cost)

    def release(self, ticket) -> None:
        if self.ledger is not None and self.limit is not None:
            self.ledger.release(ticket)
        self._open.pop(ticket, None)

    def describe(self) -> str:
        reserved = (self.ledger.view()[1] if self.ledger is not None
                    else sum(self._open.values()))
        return (f"max_cost {self.limit} reached (spent {self.spent:.4f}, {reserved:.4f} reserved "
                "by calls in flight)")

    @property
    def reached(self) -> bool:
        return self.limit is not None and self.spent >= self.limit


class _RateLimiter:
    def __init__(self, per_minute: float | None):
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self.next = 0.0
        self.lock = asyncio.Lock()

    async def wait(self):
        if not self.interval:
            return
        async with self.lock:
            now = time.monotonic()
            start = max(now, self.next)
            self.next = start + self.interval
        await asyncio.sleep(start - now)


def _retry_after(error) -> float | None:
    response = getattr(error, "response", None)
    if response is None:
        return None
    for header, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = response.headers.get(header)
        try:
            return float(value) / divisor
        except (TypeError, ValueError):
            continue
    return None


def make_client(endpoint: Endpoint):
    """The official async client; its own retries are off (ours are bounded and logged)."""
    import openai
    return openai.AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key(),
                              max_retries=0, timeout=endpoint.timeout)


async def pause(seconds: float, stop: Stop) -> None:
    """Sleep, or return early when the run is told to stop."""
    try:
        await asyncio.wait_for(stop.wait(), timeout=seconds)
    except TimeoutError:
        pass


def request_body(call: Call, endpoint: Endpoint) -> dict:
    """The chat completion request of ``call``, the same sent one by one or in a batch job."""
    extra = {"response_format": call.response_format} if call.response_format else {}
    return {"model": endpoint.model, "messages": call.messages, **endpoint.generation(), **extra}




class Stop:
    """The one stop of every set of calls made at once, and why it was set (a signal, the
    budget, an endpoint error): calls in flight finish and are cached, no new call starts."""

    def __init__(self):
        self._event = asyncio.Event()
        self.reasons: list[str] = []
        """Why it was set, in order (a reason may repeat)."""

    def set(self, reason: str) -> None:
        self.reasons.append(reason)
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    async def wait(self) -> None:
        await self._event.wait()

    def describe(self) -> str:
        """The reasons, each once: ``max_cost reached (...); SIGTERM``."""
        return "; ".join(dict.fromkeys(self.reasons))


@dataclass(frozen=True)
class Channel:
    """What the calls of one set share while they are made, one by one or in batch jobs."""
    endpoint: Endpoint
    """The endpoint called."""
    cache: CallCache
    """The shard's call store: looked up first, each reply appended."""
    answer: AnswerFormat
    """How a reply becomes a value (replies and cached replies alike)."""
    budget: Budget
    """The collection's spend against ``max_cost``: each call reserves before it starts."""
    client: object
    """The async OpenAI client (None when every call is cached)."""
    stop: Stop
    """The stop shared by every set made at once."""
    policy: RetryPolicy = RetryPolicy()
    """Retries of a call (and polls of a batch) and their backoff."""
    label: str = ""
    """The set's name in the progress lines and messages."""
    progress_interval: float = 30.0
    """Seconds between progress lines."""
    seed: int = 0
    """Seeds the retry jitter."""


@dataclass
class Tally:
    """What happened to a set's calls so far, for the progress lines and the unreachable check."""
    total: int
    """Calls in the set."""
    cached: int = 0
    """Found in the cache."""
    new: int = 0
    """Replies made in this run."""
    failed: int = 0
    """Failed in this run (after their retries)."""
    unparseable: int = 0
    """Replies, cached or new, whose answer did not parse."""
    unreachable: int = 0
    """Failures in a row that reached no server (reset by any reply or other failure)."""
    started: float = field(default_factory=time.monotonic)
    """When the set started (``time.monotonic``)."""

    def line(self, label: str) -> str:
        done = self.cached + self.new + self.failed
        return progress_line(label, done, self.total, self.cached, self.failed,
                             self.unparseable, time.monotonic() - self.started,
                             self.new + self.failed)


async def _send(channel: Channel, call: Call, rng: np.random.Generator, limiter: _RateLimiter
                ) -> CallResult:
    """One call with its retries: the reply, or a ``failed`` result."""
    import openai
    fatal = (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError)
    endpoint, policy, stop = channel.endpoint, channel.policy, channel.stop
    error = ""
    for attempt in range(policy.max_attempts):
        await limiter.wait()
        start = time.monotonic()
        try:
            response = await channel.client.chat.completions.create(**request_body(call, endpoint))
        except fatal as exc:
            raise EndpointError(f"endpoint {endpoint.name!r} ({endpoint.base_url}, model "
                                f"{endpoint.model}): {type(exc).__name__} {exc.status_code}; "
                                "check the model name, base_url and the key's variable "
                                f"{endpoint.api_key_env}") from None
        except Exception as exc:  # noqa: BLE001 - classified below
            status = getattr(exc, "status_code", None)
            error = f"{type(exc).__name__}" + (f" {status}" if status else "")
            # APIConnectionError covers timeouts too (APITimeoutError): no status, retried
            if not (isinstance(exc, openai.APIConnectionError) or transient(status)):
                break
            if attempt + 1 < policy.max_attempts:
                await pause(backoff_delay(attempt, policy, rng.random(), _retry_after(exc)), stop)
            if stop.is_set():  # told to stop: no more retries (the call stays uncached)
                error += " (stopped before retrying)"
                break
            continue
        return CallResult.from_reply(call.key, endpoint, response.model_dump(), channel.answer,
                                     latency=round(time.monotonic() - start, 4),
                                     attempts=attempt + 1)
    return CallResult.failure(call.key, endpoint.name, error, attempt + 1)


async def execute(calls: list[Call], channel: Channel) -> list[CallResult]:
    """Results of ``calls`` in order, made one by one through ``channel`` (see the module
    docstring); :class:`Stopped` when its stop was set before every call was made."""
    endpoint, budget, cache, stop, label = (channel.endpoint, channel.budget, channel.cache,
                                            channel.stop, channel.label)
    results: list[CallResult | None] = [None] * len(calls)
    pending = deque()
    for i, call in enumerate(calls):
        record = cache.get(call.key)
        if record is None:
            pending.append(i)
        else:
            results[i] = CallResult.from_cache(record, channel.answer)
    tally = Tally(len(calls), cached=len(calls) - len(pending))
    # a shard whose first calls all fail to connect stops instead of retrying every call
    unreachable_limit = max(3, min(endpoint.max_concurrency, len(pending)))
    tally.unparseable = sum(r is not None and r.status != "ok" for r in results)
    limiter = _RateLimiter(endpoint.requests_per_minute)
    rng = np.random.default_rng(channel.seed)

    async def worker():
        while pending and not stop.is_set():
            ticket = budget.reserve(calls[pending[0]])
            if ticket is None:
                stop.set(budget.describe())
                break
            i = pending.popleft()
            try:
                result = await _send(channel, calls[i], rng, limiter)
            except BaseException:
                budget.release(ticket)
                raise
            if result.status == FAILED:
                budget.release(ticket)
            if result.status == FAILED and stop.is_set():
                pending.appendleft(i)  # cut short by the stop: not made, not a failure
                break
            if result.status == FAILED:
                tally.failed += 1
                log.warning("%s: call failed after %d tries (%s)", label, result.attempts,
                            result.error)
                unreachable = result.error.startswith(UNREACHABLE_ERRORS)
                tally.unreachable = tally.unreachable + 1 if unreachable else 0
                if tally.new == 0 and tally.unreachable >= unreachable_limit:
                    raise EndpointError(
                        f"endpoint {endpoint.name!r} cannot be reached at {endpoint.base_url}: "
                        f"{tally.unreachable} calls in a row failed with {result.error} "
                        f"after {result.attempts} tries each, and none succeeded; check that "
                        "the server is running and the base_url (nothing was cached, no cost)")
            else:
                tally.unreachable = 0
                budget.settle(ticket, result.cost)  # paid: counted before it is cached
                cache.put(result.to_dict())
                tally.new += 1
                tally.unparseable += result.status != "ok"
            results[i] = result

    async def reporter():
        while True:
            await asyncio.sleep(channel.progress_interval)
            log.info(tally.line(label))

    log.info("%s: %d calls, %d in the cache, %d to send (concurrency %d)", label, len(calls),
             tally.cached, len(pending), endpoint.max_concurrency)
    progress = asyncio.create_task(reporter())
    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(max(1, min(endpoint.max_concurrency, len(pending)))):
                group.create_task(worker())
    except ExceptionGroup as errors:  # the first worker's error (e.g. EndpointError) says it all
        raise errors.exceptions[0] from None
    finally:
        progress.cancel()
    log.info(tally.line(label))
    if pending:
        raise Stopped(f"{label}: stopped ({stop.describe()}) with {len(pending)} of {len(calls)} "
                      "calls not made; finished calls are cached: rerun to continue where it "
                      "stopped (after raising max_cost if that was the reason)")
    return results
