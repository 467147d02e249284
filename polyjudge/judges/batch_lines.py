"""The pure pieces of sending calls in provider batch jobs (:mod:`polyjudge.judges.batch` is the
shell): a batch's input file, the lines of its output and error files and what they say of each
request (a reply, sent again, failed), and the progress line. Tested without a server."""
from __future__ import annotations

import json
from dataclasses import dataclass

from .cache import canonical_json
from .endpoints import Endpoint
from .runner import Call, EndpointError, request_body, transient

URL = "/v1/chat/completions"
UNFINISHED = ("batch_expired", "batch_cancelled")
"""Error codes of requests a batch did not get to: they go into the next batch."""


class BatchError(EndpointError):
    """A batch the run cannot use (failed validation, malformed output): stops the shard."""


def request_lines(calls: list[Call], endpoint: Endpoint) -> bytes:
    """The batch input file: one request per call, ``custom_id`` its cache key."""
    return "".join(canonical_json({"custom_id": c.key, "method": "POST", "url": URL,
                                   "body": request_body(c, endpoint)}) + "\n"
                   for c in calls).encode()


def read_result_lines(text: str, batch: str, which: str) -> list[dict]:
    """Lines of a batch's output or error file; a malformed line is a :class:`BatchError` naming
    the batch, the file and the line."""
    lines = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            entry = None
        if not (isinstance(entry, dict) and isinstance(entry.get("custom_id"), str)
                and ("response" in entry or "error" in entry)):
            excerpt = line if len(line) <= 80 else line[:77] + "..."
            raise BatchError(f"batch {batch}: {which} file line {number} is not a result (a JSON "
                             f"object with custom_id and response or error): {excerpt!r}")
        lines.append(entry)
    return lines


def line_error(entry: dict) -> tuple[str, str]:
    """(code, message) of an error-file line (a request error or one the batch did not reach)."""
    error = entry.get("error") or {}
    response = entry.get("response") or {}
    if not error and isinstance(response.get("body"), dict):
        error = response["body"].get("error") or {}
    code = str(error.get("code") or response.get("status_code") or "error")
    return code, str(error.get("message") or "")


def line_status(entry: dict) -> int | None:
    """The HTTP status of a result line: its response's, else a numeric error code's."""
    status = (entry.get("response") or {}).get("status_code")
    if isinstance(status, int):
        return status
    code = str((entry.get("error") or {}).get("code") or "")
    return int(code) if code.isdigit() else None


@dataclass(frozen=True)
class Outcome:
    """What an ended batch's files say of each of its requests (:func:`sort_requests`)."""
    replies: dict
    """key -> the reply (a chat completion object) of each request answered with status 200."""
    again: dict
    """key -> why it goes into the next batch: a transient error, or not reached."""
    failed: dict
    """key -> why it failed for good: an error that is not transient, or its tries used up."""


def sort_requests(keys: list[str], output: list[dict], errors: list[dict], batch: str,
                  tries: dict, max_attempts: int) -> Outcome:
    """Each of a batch's requests (``keys``) sorted by its lines in the batch's output and error
    files (:func:`read_result_lines`); lines of other keys are ignored.

    A line with status 200 and a body is a reply; the first reply of a key is kept, so a request
    answered is never sent again, whatever other lines say. A transient status
    (:func:`~polyjudge.judges.runner.transient`: 429, 5xx, ...), a request the batch did not reach
    (``batch_expired``, ``batch_cancelled``) or one on no line goes again, unless it has now gone
    into ``max_attempts`` batches (``tries``: key -> batches before this one): then it fails with
    this batch's reason. Any other error (400, ...) fails at once. Reasons name the batch, the
    status, the error code and message: ``batch b: 400 invalid_request bad``.
    """
    wanted = set(keys)
    replies: dict = {}
    last: dict = {}  # key -> (reason, may go again), from its last line that is not a reply
    for line in [*output, *errors]:
        key = line["custom_id"]
        if key not in wanted or key in replies:
            continue
        response = line.get("response") or {}
        status = line_status(line)
        if status == 200 and isinstance(response.get("body"), dict):
            replies[key] = response["body"]
            continue
        code, message = line_error(line)
        words = [str(status) if status is not None and code != str(status) else "", code,
                 message]
        last[key] = (f"batch {batch}: " + " ".join(w for w in words if w),
                     code in UNFINISHED or transient(status))
    again, failed = {}, {}
    for key in keys:
        if key in replies:
            continue
        reason, retry = last.get(key, (f"batch {batch}: no line in its output or error file",
                                       True))
        n = tries.get(key, 0) + 1
        if not retry:
            failed[key] = reason
        elif n < max_attempts:
            again[key] = reason
        else:
            failed[key] = f"{reason} (not completed in {n} batches)"
    return Outcome(replies, again, failed)


def call_name(call: Call) -> str:
    """A call as a log line names it: ``item 7 language zh side chosen``."""
    fields = ("item", "condition", "field", "language", "side", "order")
    return " ".join(f"{f} {call.meta[f]}" for f in fields if f in call.meta) or call.key[:16]


def progress_line(label: str, states: list[dict], elapsed: float) -> str:
    """``label: batch b in_progress, 120/400 requests done (3 failed); waiting 5 min 12 s``
    (``elapsed``: seconds since the oldest batch was created)."""
    parts = []
    for s in states:
        counts = s.get("request_counts") or {}
        parts.append(f"batch {s['id']} {s['status']}, {counts.get('completed', 0)}/"
                     f"{counts.get('total', 0)} requests done ({counts.get('failed', 0)} failed)")
    minutes, seconds = divmod(int(elapsed), 60)
    waited = f"{minutes} min {seconds} s" if minutes else f"{seconds} s"
    return f"{label}: {'; '.join(parts)}; waiting {waited}"


def chunks(items: list, size: int) -> list[list]:
    return [items[i:i + size] for i in range(0, len(items), size)]
