"""Sending an endpoint's calls as provider batch jobs, in the OpenAI Batch protocol.

A batch is the calls' requests as one JSON Lines file (``custom_id``: the call's cache key; the
body exactly as sent one by one), uploaded (``POST /v1/files``, purpose ``batch``), created
(``POST /v1/batches``), polled (``GET /v1/batches/{id}``), and its output and error files read.

Nothing is paid twice and nothing is lost:

* The journal ``batches-shard<k>.jsonl``, beside the shard's cache file, records each batch's
  request keys and input file before the batch is created, and its id once it is. A run that
  is killed, even by SIGKILL, re-attaches to its open batches on the next run instead of
  submitting them again. A batch created just before the kill, whose id was not yet written, is
  found by ``GET /v1/batches`` from the journal entry named in its metadata.
* Results go into the same per-call cache as calls made one by one, under the same keys, costed
  at the endpoint's batch prices.
* A request whose line in the output or error file has a transient status (429, 5xx, ...:
  :func:`~polyjudge.judges.runner.transient`, the rule calls made one by one are retried by),
  and a request an expired or cancelled batch did not reach, go into the next batch of the run
  (``batch_leftovers: sync``: sent one by one), each in at most ``max_attempts`` batches
  (counted on by a run that re-attaches); then it is ``failed`` with its last error. Any other
  error (400, ...) is ``failed`` at once and logged with its reason. A failed request is
  recorded, not cached, and sent again by a later run. A request answered is never sent again
  (:func:`~polyjudge.judges.batch_lines.sort_requests`).
* SIGTERM / SIGINT (or another set's stop) while waiting leave the batch running at the
  provider and stop the run; the next run re-attaches. Nothing is cancelled.
* ``max_cost``: before a batch is created its estimated cost at batch prices is reserved in the
  collection's ledger as a *lasting* reservation, which counts until its results are taken in.
"""
from __future__ import annotations

import json
import logging
import os
import time
import uuid
from collections import Counter
from pathlib import Path

from .batch_lines import (URL, BatchError, call_name, chunks, progress_line, read_result_lines,
                          request_lines, sort_requests)
from .cache import CallCache, canonical_json
from .records import CallResult
from .runner import Call, Channel, EndpointError, Stopped, pause

log = logging.getLogger("polyjudge.judges")

NOT_FOUND = "not found"
TERMINAL = ("completed", "expired", "cancelled", "failed", NOT_FOUND)
METADATA_KEY = "polyjudge_journal"


# --- the journal ---------------------------------------------------------------------------------
def journal_path(cache: CallCache) -> Path:
    """``batches-shard<k>.jsonl`` beside the cache file (not matched by ``shard*.jsonl``)."""
    return cache.path.with_name("batches-" + cache.path.name)


class Journal:
    """Append-only lines ``{"local": id, ...}``; an entry is the merge of its lines. Events:
    submitted (``file``, ``keys``, ``estimate``, ``ticket``, and ``tries``: the batches its
    requests sent again went into before), created (``batch``), ``done``."""

    def __init__(self, path):
        self.path = Path(path)

    def entries(self) -> dict[str, dict]:
        merged: dict[str, dict] = {}
        if not self.path.is_file():
            return merged
        with open(self.path, encoding="utf-8") as handle:
            for line in handle:
                try:
                    entry = json.loads(line)
                except ValueError:  # torn by a kill
                    continue
                if isinstance(entry, dict) and "local" in entry:
                    merged.setdefault(entry["local"], {}).update(entry)
        return merged

    def open_entries(self) -> list[dict]:
        return [e for e in self.entries().values() if "done" not in e]

    def write(self, entry: dict) -> None:
        """Append and fsync: the line must be on disk before the provider acts on it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(canonical_json(entry) + "\n")
            handle.flush()
            os.fsync(handle.fileno())


# --- the shell -----------------------------------------------------------------------------
class _Run:
    """One set's batches: re-attach, submit, wait, take in, resubmit what did not complete."""

    def __init__(self, calls: list[Call], channel: Channel, send_one_by_one):
        self.calls, self.send_one_by_one = calls, send_one_by_one
        self.endpoint, self.cache, self.answer = channel.endpoint, channel.cache, channel.answer
        self.budget, self.label, self.client = channel.budget, channel.label, channel.client
        self.stop, self.policy = channel.stop, channel.policy
        self.interval = channel.progress_interval
        self.journal = Journal(journal_path(self.cache))
        self.results: dict[str, CallResult] = {}
        self.tries: Counter = Counter()  # batches each key went into without a reply
        self.names = {c.key: call_name(c) for c in calls}
        self.capped: str | None = None  # why max_cost left no room for a batch

    async def __call__(self) -> list[CallResult]:
        for call in self.calls:
            record = self.cache.get(call.key)
            if record is not None:
                self.results[call.key] = CallResult.from_cache(record, self.answer)
        running = await self.reattach()
        cached = len(self.results)
        log.info("%s: %d calls, %d in the cache, %d in %d batch(es) already submitted", self.label,
                 len(self.calls), cached, sum(len(e["keys"]) for e in running), len(running))
        while not self.stop.is_set():
            waiting = {k for e in running for k in e["keys"]}
            missing = [c for c in self.calls if c.key not in self.results
                       and c.key not in waiting]
            leftovers = [c for c in missing if self.tries[c.key]]
            if leftovers and self.endpoint.batch_leftovers == "sync" and not self.capped:
                for result in await self.send_one_by_one(leftovers):
                    self.results[result.key] = result
                missing = [c for c in missing if c.key not in self.results]
            for chunk in chunks(missing if not self.capped else [],
                                self.endpoint.batch_max_requests):
                entry = None if self.stop.is_set() else await self.submit(chunk)
                if entry is None:
                    break
                running.append(entry)
            if not running:
                break
            states = await self.wait(running)
            ended = [e for e in running if states.get(e["batch"], {}).get("status") in TERMINAL]
            for entry in ended:
                state = states[entry["batch"]]
                self.take_in(entry, state, await self.files(state))
            running = [e for e in running if e not in ended]
        if self.capped:
            self.stop.set(self.capped)  # the other sets stop too, as at a call that does not fit
        left = [c for c in self.calls if c.key not in self.results]
        if left:
            running_ids = ", ".join(e["batch"] for e in running)
            at_provider = (f"; batch(es) {running_ids} go on at the provider and the next run "
                           "re-attaches to them (nothing is submitted twice)" if running else "")
            raise Stopped(f"{self.label}: stopped ({self.stop.describe()}) with "
                          f"{len(left)} of {len(self.calls)} calls not made{at_provider}; "
                          "finished calls are cached: rerun to continue where it stopped")
        return [self.results[c.key] for c in self.calls]

    # --- steps ------------------------------------------------------------------------------
    async def reattach(self) -> list[dict]:
        """The journal's open batches, found at the provider (by id, or by metadata for a batch
        created just before a kill); entries never created are closed."""
        entries = self.journal.open_entries()
        if not entries:
            return []
        unnamed = [e for e in entries if "batch" not in e]
        found = {}
        if unnamed:  # newest first, back to an hour before the oldest unnamed entry
            oldest = min(float(e.get("time", 0.0)) for e in unnamed) - 3600
            async for batch in self.client.batches.list(limit=100):
                if batch.created_at < oldest:
                    break
                local = (batch.metadata or {}).get(METADATA_KEY)
                if local:
                    found.setdefault(local, batch.id)
        running = []
        for entry in entries:
            if "batch" not in entry and entry["local"] in found:
                entry["batch"] = found[entry["local"]]
                self.journal.write({"local": entry["local"], "batch": entry["batch"]})
            if "batch" not in entry:
                self.journal.write({"local": entry["local"], "done": "never created"})
                self.release(entry)
                continue
            log.info("%s: re-attaching to batch %s (%d requests, submitted by an earlier run)",
                     self.label, entry["batch"], len(entry["keys"]))
            for key, n in (entry.get("tries") or {}).items():  # sent again by that run
                self.tries[key] = max(self.tries[key], int(n))
            running.append(entry)
        return running

    async def submit(self, chunk: list[Call]) -> dict | None:
        """Reserve, upload, journal, create, journal; None when ``max_cost`` leaves no room."""
        estimate = float(sum(self.budget.estimate(c) for c in chunk))
        ticket = self.budget.reserve_cost(estimate, lasting=True)
        if ticket is None:  # the batches already created are waited for, as calls in flight are
            self.capped = self.budget.describe()
            return None
        local = uuid.uuid4().hex
        entry = {"local": local, "keys": [c.key for c in chunk], "estimate": estimate,
                 "ticket": ticket if isinstance(ticket, str) else None,
                 "endpoint": self.endpoint.name, "time": time.time()}
        tried = {c.key: self.tries[c.key] for c in chunk if self.tries[c.key]}
        if tried:  # a re-attaching run counts on from there
            entry["tries"] = tried
        try:
            uploaded = await self.client.files.create(
                file=(f"polyjudge-{local}.jsonl", request_lines(chunk, self.endpoint)),
                purpose="batch")
            self.journal.write({**entry, "file": uploaded.id})
            batch = await self.client.batches.create(
                input_file_id=uploaded.id, endpoint=URL,
                completion_window=self.endpoint.batch_completion_window,
                metadata={METADATA_KEY: local})
        except Exception as exc:  # noqa: BLE001 - one message for every way creating fails
            if local not in self.journal.entries():  # not uploaded: nothing can be running
                self.budget.release(ticket)
            raise self.endpoint_error("creating a batch", exc) from None
        self.journal.write({"local": local, "batch": batch.id})
        log.info("%s: batch %s created with %d requests (estimated $%.4f at batch prices)",
                 self.label, batch.id, len(chunk), estimate)
        return {**entry, "file": uploaded.id, "batch": batch.id}

    async def wait(self, running: list[dict]) -> dict[str, dict]:
        """Poll until every batch has ended or the run is told to stop; a progress line every
        ``progress_interval`` seconds and at every change of status."""
        delay, started = self.endpoint.batch_poll_interval, time.monotonic()
        shown, failures = 0.0, 0
        states: dict[str, dict] = {}
        seen: dict[str, str] = {}
        while True:
            for entry in running:
                if states.get(entry["batch"], {}).get("status") in TERMINAL:
                    continue
                try:
                    states[entry["batch"]] = (await self.client.batches.retrieve(entry["batch"])
                                              ).model_dump()
                    failures = 0
                except Exception as exc:  # noqa: BLE001 - polled again, up to max_attempts
                    if getattr(exc, "status_code", None) == 404:  # gone: its requests go again
                        states[entry["batch"]] = {"id": entry["batch"], "status": NOT_FOUND}
                        continue
                    failures += 1
                    if failures >= self.policy.max_attempts or getattr(
                            exc, "status_code", None) in (401, 403):
                        raise self.endpoint_error(f"polling batch {entry['batch']}", exc) from None
                    log.warning("%s: polling batch %s failed (%s); trying again", self.label,
                                entry["batch"], type(exc).__name__)
            now = time.monotonic()
            changed = any(seen.get(i) != s["status"] for i, s in states.items())
            seen = {i: s["status"] for i, s in states.items()}
            if changed or now - shown >= self.interval:
                created = [s["created_at"] for s in states.values() if s.get("created_at")]
                waited = time.time() - min(created) if created else now - started
                log.info(progress_line(self.label, list(states.values()), max(0.0, waited)))
                shown = now
            if len(states) == len(running) and all(s["status"] in TERMINAL
                                                   for s in states.values()):
                return states
            await pause(delay, self.stop)
            if self.stop.is_set():
                return states
            delay = min(delay * 1.5, self.endpoint.batch_poll_max)

    async def files(self, state: dict) -> tuple[str, str]:
        texts = []
        for field in ("output_file_id", "error_file_id"):
            if not state.get(field):
                texts.append("")
                continue
            try:
                texts.append((await self.client.files.content(state[field])).text)
            except Exception as exc:  # noqa: BLE001
                raise self.endpoint_error(f"reading batch {state['id']}'s {field}", exc) from None
        return texts[0], texts[1]

    def take_in(self, entry: dict, state: dict, files: tuple[str, str]) -> None:
        """Cost, cache and results of an ended batch; what it did not complete is left over."""
        batch = state["id"]
        if state["status"] == NOT_FOUND:  # e.g. another account's: its requests are sent again
            log.warning("%s: batch %s in %s is not known at %s; its %d requests are sent again",
                        self.label, batch, self.journal.path, self.endpoint.base_url,
                        len(entry["keys"]))
            self.journal.write({"local": entry["local"], "done": NOT_FOUND})
            self.release(entry)
            return
        if state["status"] == "failed":
            errors = ((state.get("errors") or {}).get("data") or [])
            detail = "; ".join(f"line {e.get('line')}: {e.get('message')}" for e in errors[:3])
            self.journal.write({"local": entry["local"], "done": "failed"})
            self.release(entry)
            raise BatchError(f"{self.label}: the provider refused batch {batch} "
                             f"({detail or 'no reason given'}); nothing in it was run or paid")
        output = read_result_lines(files[0], batch, "output")
        errors = read_result_lines(files[1], batch, "error")
        found = sort_requests(entry["keys"], output, errors, batch, self.tries,
                              self.policy.max_attempts)
        records = [CallResult.from_reply(key, self.endpoint, body, self.answer, batch=batch,
                                         attempts=self.tries[key] + 1)
                   for key, body in found.replies.items()]
        cost = sum(record.cost for record in records)
        # paid: counted before it is cached (a kill in between over-counts, never under-counts)
        ticket = entry.get("ticket")
        if ticket is not None:
            self.budget.settle(ticket, cost)
        else:
            self.budget.add(cost)
        for record in records:
            if self.cache.get(record.key) is None:
                self.cache.put(record.to_dict())
            self.results.setdefault(record.key, record)
        for key in entry["keys"]:
            if key not in found.replies:
                self.tries[key] += 1
        for key, reason in found.failed.items():
            if key not in self.results:
                self.results[key] = CallResult.failure(key, self.endpoint.name, reason,
                                                       self.tries[key])
                log.warning("%s: call %s failed, not sent again in this run (%s)", self.label,
                            self.names.get(key, key[:16]), reason)
        self.journal.write({"local": entry["local"], "done": state["status"]})
        again = Counter(reason.split(": ", 1)[1] for reason in found.again.values())
        log.info("%s: batch %s %s: %d results ($%.4f), %d failed, %d sent again%s",
                 self.label, batch, state["status"], len(records), cost, len(found.failed),
                 len(found.again), f" ({'; '.join(f'{n} x {r}' for r, n in again.items())})"
                 if again else "")

    # --- helpers ----------------------------------------------------------------------------
    def release(self, entry: dict) -> None:
        if entry.get("ticket") is not None:
            self.budget.release(entry["ticket"])

    def endpoint_error(self, doing: str, exc: Exception) -> EndpointError:
        status = getattr(exc, "status_code", None)
        return BatchError(f"endpoint {self.endpoint.name!r} ({self.endpoint.base_url}, model "
                          f"{self.endpoint.model}): {doing} failed with {type(exc).__name__}"
                          f"{' ' + str(status) if status else ''}: {exc}; batches already "
                          f"created are in {self.journal.path} and the next run re-attaches")


async def run_batches(calls: list[Call], channel: Channel, send_one_by_one
                      ) -> list[CallResult]:
    """Results of ``calls`` in order, made in batch jobs through ``channel`` (see the module
    docstring); ``send_one_by_one(calls)`` sends leftovers synchronously with
    ``batch_leftovers: sync``."""
    return await _Run(calls, channel, send_one_by_one)()
