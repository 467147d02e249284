"""A judge call's result as a typed record: what a call returns, what the cache stores and what
the calls tables read (:class:`CallResult`).

The record is made from a chat completion (:meth:`CallResult.from_reply`), a failure
(:meth:`CallResult.failure`) or a cache line (:meth:`CallResult.from_cache`: the stored reply
re-parsed). :meth:`CallResult.to_dict` gives the plain record: for a reply exactly the cache line
written since the cache began, for a failure the fields a failure has; :meth:`CallResult.from_dict`
reads it back, so the cache files and the calls tables keep their bytes and columns.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, fields

from .endpoints import Endpoint
from .parse import FAILED, OK, PARSE_FAILURE, AnswerFormat, parse_answer

REPLY_FIELDS = ("key", "endpoint", "model", "served_model", "usage_reported", "base_url", "raw",
                "value", "status", "finish_reason", "truncated", "input_tokens", "output_tokens",
                "cost", "latency", "attempts", "created")
"""The fields of a reply's cache line (``batch`` too when it came from a batch job)."""
FAILURE_FIELDS = ("key", "endpoint", "status", "error", "attempts")
"""The fields of a failed call's record (never cached)."""


@dataclass(frozen=True)
class CallResult:
    """The result of one judge call: a reply (``ok`` or ``parse_failure``), a failure
    (``failed``), or no call at all (``no_input``, in the calls tables)."""
    key: str
    """The call's cache key (:func:`polyjudge.judges.cache.call_key`)."""
    endpoint: str
    """The name of the endpoint called."""
    status: str
    """``ok`` (the answer parsed), ``parse_failure`` (no answer: never scored), ``failed`` (no
    reply after the retries: recorded, not cached) or ``no_input`` (no text to judge)."""
    value: object = None
    """The parsed answer (a label, an integer score or a text); None unless ``ok``."""
    raw: str | None = None
    """The reply's text as the server sent it (kept, so answers can be re-parsed)."""
    model: str | None = None
    """The model asked for (the endpoint's ``model``)."""
    served_model: str | None = None
    """The model the server says answered (some servers answer with whatever they loaded)."""
    usage_reported: bool = False
    """Whether the reply carried ``usage`` (without it tokens and cost count as 0)."""
    base_url: str | None = None
    """The endpoint's base URL."""
    finish_reason: str | None = None
    """Why the server ended the reply (``stop``, ``length``, ...)."""
    truncated: bool = False
    """The reply was cut off at ``max_tokens`` (finish reason ``length``): a parse failure."""
    input_tokens: int = 0
    """Prompt tokens, as the server's ``usage`` counts them."""
    output_tokens: int = 0
    """Completion tokens, as the server's ``usage`` counts them."""
    cost: float = 0.0
    """USD of the call at the endpoint's prices (its batch prices for a batch job's reply)."""
    latency: float = 0.0
    """Seconds from sending the request to its reply (0 in a batch job)."""
    attempts: int = 0
    """Tries made (the first included); for a batch job's failure, the batches it went into."""
    created: str | None = None
    """When the reply came, UTC, ``YYYY-MM-DDTHH:MM:SSZ``."""
    batch: str | None = None
    """The provider's id of the batch job that made it; None for a call made one by one."""
    error: str | None = None
    """Why a failed call failed (the error's type and HTTP status, or the batch's error)."""
    cached: bool = False
    """Found in the cache, not made in this run (not in the cache line)."""

    @classmethod
    def from_reply(cls, key: str, endpoint: Endpoint, body: dict, answer: AnswerFormat, *,
                   latency: float = 0.0, attempts: int = 1, batch: str | None = None
                   ) -> "CallResult":
        """The result of one chat completion (``body``: its JSON object), costed at the
        endpoint's batch prices when it came from batch job ``batch``."""
        choices = body.get("choices") or []
        choice = choices[0] if choices else {}
        raw = (choice.get("message") or {}).get("content")
        finish = choice.get("finish_reason")
        usage = body.get("usage")
        tokens_in = int((usage or {}).get("prompt_tokens") or 0)
        tokens_out = int((usage or {}).get("completion_tokens") or 0)
        value, status = parse_answer(raw, answer, finish == "length")
        return cls(key=key, endpoint=endpoint.name, model=endpoint.model,
                   served_model=body.get("model"), usage_reported=usage is not None,
                   base_url=endpoint.base_url, raw=raw, value=value, status=status,
                   finish_reason=finish, truncated=finish == "length", input_tokens=tokens_in,
                   output_tokens=tokens_out,
                   cost=float(endpoint.cost(tokens_in, tokens_out, batch=batch is not None)),
                   latency=latency, attempts=attempts,
                   created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), batch=batch)

    @classmethod
    def failure(cls, key: str, endpoint: str, error: str, attempts: int) -> "CallResult":
        """A call that got no usable reply: recorded in the tables, never cached."""
        return cls(key=key, endpoint=endpoint, status=FAILED, error=error, attempts=attempts)

    @classmethod
    def from_cache(cls, record: dict, answer: AnswerFormat) -> "CallResult":
        """The result of a call found in the cache: its stored reply re-parsed with the current
        answer format (so a changed parser needs no new calls)."""
        value, status = parse_answer(record.get("raw"), answer, bool(record.get("truncated")))
        return cls.from_dict({**record, "value": value, "status": status, "cached": True})

    @classmethod
    def from_dict(cls, record: dict) -> "CallResult":
        """The record of a plain one (a cache line, or :meth:`to_dict`); other keys are left."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in record.items() if k in known})

    @property
    def is_reply(self) -> bool:
        """The server replied (``ok`` or ``parse_failure``): the result is paid and cached."""
        return self.status in (OK, PARSE_FAILURE)

    def to_dict(self, *, with_cached: bool = False) -> dict:
        """The plain record: a reply's cache line (``batch`` only from a batch job), or a
        failure's fields; ``with_cached`` adds ``cached``, as :func:`run_calls` returns it."""
        names = REPLY_FIELDS if self.is_reply else FAILURE_FIELDS
        record = {name: getattr(self, name) for name in names}
        if self.is_reply and self.batch is not None:
            record["batch"] = self.batch
        return {**record, "cached": self.cached} if with_cached else record
