"""Calling an endpoint one by one: bounded concurrency, a request rate, retries, the cache and a
cost cap (:mod:`polyjudge.judges.sending` makes sets of calls this way or in batch jobs).

Everything it decides is a pure function tested without a server (:func:`backoff_delay`,
:func:`progress_line`); :func:`execute` is the shell.

* Each call is looked up in the cache first; only missing calls are sent.
* At most ``max_concurrency`` calls are in flight, started at most ``requests_per_minute``.
* 429, 408/409, 5xx, timeouts and connection errors are retried up to ``max_attempts`` times
  with exponential backoff and jitter, waiting at least the server's ``Retry-After``.
  401/403/404 stop the shard at once (a wrong key, model or URL would fail every call). Any other
  error, or retries used up, makes a ``failed`` result: recorded, never cached, never a verdict.
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

from .endpoints import Endpoint
from .parse import FAILED, AnswerFormat, parse_answer

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
    """The run stopped before every call was made (cost cap or signal); finished calls are cached."""


UNREACHABLE_ERRORS = ("APIConnectionError", "APITimeoutError")
"""Failures that mean the endpoint cannot be reached at all (no HTTP answer)."""


class EndpointError(RuntimeError):
    """A configuration error that would fail every call (401, 403, 404, or no server at all)."""


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


async def pause(seconds: float, stop: asyncio.Event) -> None:
    """Sleep, or return early when the run is told to stop."""
    try:
        await asyncio.wait_for(stop.wait(), timeout=seconds)
    except TimeoutError:
        pass


def request_body(call: Call, endpoint: Endpoint) -> dict:
    """The chat completion request of ``call``, the same sent one by one or in a batch job."""
    extra = {"response_format": call.response_format} if call.response_format else {}
    return {"model": endpoint.model, "messages": call.messages, **endpoint.generation(), **extra}


def cached_result(record: dict, answer: AnswerFormat) -> dict:
    """The result of a call found in the cache: its stored reply re-parsed with the current
    answer format (so a changed parser needs no new calls)."""
    value, status = parse_answer(record.get("raw"), answer, bool(record.get("truncated")))
    return {**record, "value": value, "status": status, "cached": True}


def reply_record(key: str, endpoint: Endpoint, body: dict, answer: AnswerFormat, *,
                 latency: float = 0.0, attempts: int = 1, batch: str | None = None) -> dict:
    """The cache record of one chat completion (``body``: its JSON object), costed at the
    endpoint's batch prices when it came from batch job ``batch``."""
    choices = body.get("choices") or []
    choice = choices[0] if choices else {}
    raw = (choice.get("message") or {}).get("content")
    finish = choice.get("finish_reason")
    usage = body.get("usage")
    tokens_in = int((usage or {}).get("prompt_tokens") or 0)
    tokens_out = int((usage or {}).get("completion_tokens") or 0)
    value, status = parse_answer(raw, answer, finish == "length")
    record = {"key": key, "endpoint": endpoint.name, "model": endpoint.model,
              "served_model": body.get("model"), "usage_reported": usage is not None,
              "base_url": endpoint.base_url, "raw": raw, "value": value, "status": status,
              "finish_reason": finish, "truncated": finish == "length",
              "input_tokens": tokens_in, "output_tokens": tokens_out,
              "cost": float(endpoint.cost(tokens_in, tokens_out, batch=batch is not None)),
              "latency": latency, "attempts": attempts,
              "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    return {**record, "batch": batch} if batch is not None else record


async def _send(client, endpoint: Endpoint, call: Call, answer: AnswerFormat, policy: RetryPolicy,
                rng: np.random.Generator, limiter: _RateLimiter, stop: asyncio.Event) -> dict:
    import openai
    retryable = (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError,
                 openai.ConflictError)
    fatal = (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError)
    error = ""
    for attempt in range(policy.max_attempts):
        await limiter.wait()
        start = time.monotonic()
        try:
            response = await client.chat.completions.create(**request_body(call, endpoint))
        except fatal as exc:
            raise EndpointError(f"endpoint {endpoint.name!r} ({endpoint.base_url}, model "
                                f"{endpoint.model}): {type(exc).__name__} {exc.status_code}; "
                                "check the model name, base_url and the key's variable "
                                f"{endpoint.api_key_env}") from None
        except Exception as exc:  # noqa: BLE001 - classified below
            status = getattr(exc, "status_code", None)
            error = f"{type(exc).__name__}" + (f" {status}" if status else "")
            if not (isinstance(exc, retryable) or status in (408, 409)
                    or (status is not None and status >= 500)):
                break
            if attempt + 1 < policy.max_attempts:
                await pause(backoff_delay(attempt, policy, rng.random(), _retry_after(exc)), stop)
            if stop.is_set():  # told to stop: no more retries (the call stays uncached)
                error += " (stopped before retrying)"
                break
            continue
        return reply_record(call.key, endpoint, response.model_dump(), answer,
                            latency=round(time.monotonic() - start, 4), attempts=attempt + 1)
    return {"key": call.key, "endpoint": endpoint.name, "status": FAILED, "error": error,
            "attempts": attempt + 1}


async def execute(calls, endpoint, cache, answer, policy, budget, progress_interval, label,
                  client, seed, stop: asyncio.Event, reason: list):
    """Results of ``calls`` in order, made one by one (see the module docstring); ``stop`` is
    shared by every set made at once and ``reason`` collects why it was set."""
    results: list[dict | None] = [None] * len(calls)
    pending = deque()
    for i, call in enumerate(calls):
        record = cache.get(call.key)
        if record is None:
            pending.append(i)
        else:
            results[i] = cached_result(record, answer)
    counts = {"cached": len(calls) - len(pending), "new": 0, "failed": 0, "unparseable": 0,
              "unreachable": 0}
    # a shard whose first calls all fail to connect stops instead of retrying every call
    unreachable_limit = max(3, min(endpoint.max_concurrency, len(pending)))
    for r in results:
        if r is not None and r["status"] != "ok":
            counts["unparseable"] += 1
    limiter = _RateLimiter(endpoint.requests_per_minute)
    rng = np.random.default_rng(seed)
    started = time.monotonic()

    def line():
        done = counts["cached"] + counts["new"] + counts["failed"]
        return progress_line(label, done, len(calls), counts["cached"], counts["failed"],
                             counts["unparseable"], time.monotonic() - started,
                             counts["new"] + counts["failed"])

    async def worker():
        while pending and not stop.is_set():
            ticket = budget.reserve(calls[pending[0]])
            if ticket is None:
                reason.append(budget.describe())
                stop.set()
                break
            i = pending.popleft()
            try:
                result = await _send(client, endpoint, calls[i], answer, policy, rng, limiter,
                                     stop)
            except BaseException:
                budget.release(ticket)
                raise
            if result["status"] == FAILED:
                budget.release(ticket)
            if result["status"] == FAILED and stop.is_set():
                pending.appendleft(i)  # cut short by the stop: not made, not a failure
                break
            if result["status"] == FAILED:
                counts["failed"] += 1
                log.warning("%s: call failed after %d tries (%s)", label, result["attempts"],
                            result["error"])
                unreachable = result["error"].startswith(UNREACHABLE_ERRORS)
                counts["unreachable"] = counts["unreachable"] + 1 if unreachable else 0
                if counts["new"] == 0 and counts["unreachable"] >= unreachable_limit:
                    raise EndpointError(
                        f"endpoint {endpoint.name!r} cannot be reached at {endpoint.base_url}: "
                        f"{counts['unreachable']} calls in a row failed with {result['error']} "
                        f"after {result['attempts']} tries each, and none succeeded; check that "
                        "the server is running and the base_url (nothing was cached, no cost)")
            else:
                counts["unreachable"] = 0
                budget.settle(ticket, result["cost"])  # paid: counted before it is cached
                cache.put({k: v for k, v in result.items()})
                counts["new"] += 1
                counts["unparseable"] += result["status"] != "ok"
            results[i] = {**result, "cached": False}

    async def reporter():
        while True:
            await asyncio.sleep(progress_interval)
            log.info(line())

    log.info("%s: %d calls, %d in the cache, %d to send (concurrency %d)", label, len(calls),
             counts["cached"], len(pending), endpoint.max_concurrency)
    progress = asyncio.create_task(reporter())
    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(max(1, min(endpoint.max_concurrency, len(pending)))):
                group.create_task(worker())
    except ExceptionGroup as errors:  # the first worker's error (e.g. EndpointError) says it all
        raise errors.exceptions[0] from None
    finally:
        progress.cancel()
    log.info(line())
    if pending:
        raise Stopped(f"{label}: stopped ({'; '.join(dict.fromkeys(reason))}) with "
                      f"{len(pending)} of {len(calls)} calls not made; finished calls are "
                      "cached: rerun to continue where it stopped (after raising max_cost if "
                      "that was the reason)")
    return results
