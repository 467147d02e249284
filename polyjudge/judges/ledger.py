"""A collection's spend shared by all its shard jobs, so ``max_cost`` holds however many run.

A shard job that compared only its own view of the cache with ``max_cost`` would let N shards in
parallel spend about N times the cap. The ledger is one append-only file per collection,
``<cache_dir>/<collection>/ledger.jsonl``, that every job of the collection reads and appends to
under an exclusive ``fcntl.flock``: before a call starts it *reserves* its estimated cost (the
plan's estimate), and the reservation is granted only while spend + open reservations + the
estimate stays within ``max_cost``; after the reply it is *settled* with the actual cost (before
the call is written to the cache, so a kill in between over-counts rather than under-counts), or
*released* if the call failed or was not made. The overshoot is therefore at most what the calls
in flight cost above their estimates, whatever the number of shards.

Lines: ``{"base": usd}`` (the cache's spend when the ledger was started, raised when a job
finds more in the cache than the ledger counts, e.g. calls made without a cap), ``{"reserve": id,
"cost": est, "host", "pid", "time"}``, ``{"settle": id, "cost": usd}``, ``{"release": id}``. A
job reads only the lines added since its last look. A reservation of a process that is gone (same
host, pid not running) or older than :data:`STALE_SECONDS` (another host) is not counted. A
provider batch job's reservation is ``"lasting": true``: it counts, whoever made it, until the
job that takes in the batch's results settles it (a killed run's batch goes on at the provider and
is paid), or for :data:`LASTING_SECONDS`.

Shared file systems: ``flock`` excludes across nodes on NFSv4 (and NFSv3 with lockd), on Lustre
mounted with ``-o flock`` and on GPFS; where locks are node-local (Lustre ``localflock``, some
BeeGFS set-ups) shards on different nodes do not see each other's reservations in time: run one
shard there or give each job a share of the cap. Deleting a collection's cache folder deletes its
ledger; deleting only part of a cache leaves the ledger counting what was paid (delete
``ledger.jsonl`` too to count only what is cached).
"""
from __future__ import annotations

import contextlib
import fcntl
import itertools
import json
import os
import socket
import time
from pathlib import Path

from ..data import jsonfile
from .cache import spent

STALE_SECONDS = 3600.0
"""A reservation older than this from another host no longer counts (a call lasts minutes)."""
LASTING_SECONDS = 48 * 3600.0
"""A batch job's reservation counts this long at most (twice OpenAI's completion window)."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Ledger:
    """Reserve / settle / release against ``limit`` (USD) in the collection's ledger file."""

    def __init__(self, cache_dir, collection: str, limit: float):
        self.path = Path(cache_dir) / collection / "ledger.jsonl"
        self.cache_dir, self.collection, self.limit = cache_dir, collection, limit
        self.host, self.pid = socket.gethostname(), os.getpid()
        self.offset, self.base, self.settled = 0, 0.0, 0.0
        self.open: dict[str, dict] = {}
        self._ids = itertools.count()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._locked() as handle:
            # the ledger starts from the cache, and catches up with calls cached without it
            # (made while max_cost was null): the spend is never below what the cache records
            cached = spent(cache_dir, collection)
            if handle.tell() == 0 or cached > self.spent:
                self._append(handle, {"base": self.base + max(0.0, cached - self.spent)})

    # --- the file ------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _locked(self):
        """The ledger file, opened and locked exclusively, with the lines added since read."""
        with open(self.path, "a+b") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                self._read(handle)
                yield handle
            finally:
                try:
                    handle.flush()  # closing pushes it to an NFS server (close-to-open)
                finally:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def _read(self, handle) -> None:
        """Take in the lines written since the last look (a torn last line is skipped)."""
        handle.seek(self.offset)
        for line in handle:
            if not line.endswith(b"\n"):
                break
            self.offset += len(line)
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            self._read_entry(entry)
        handle.seek(0, 2)
        if handle.tell() != self.offset:  # a torn line: start the next entry on its own line
            handle.write(b"\n")
            self.offset = handle.tell()

    def _append(self, handle, entry: dict) -> None:
        text = (jsonfile.dumps(entry, separators=(",", ":")) + "\n").encode()
        handle.write(text)
        self.offset += len(text)
        self._read_entry(entry)

    def _read_entry(self, entry: dict) -> None:
        if not isinstance(entry, dict):
            return
        if "base" in entry:
            self.base = float(entry["base"])
        elif "reserve" in entry:
            self.open[entry["reserve"]] = entry
        else:
            key = entry.get("settle", entry.get("release"))
            self.open.pop(key, None)
            self.settled += float(entry.get("cost", 0.0)) if "settle" in entry else 0.0

    # --- the view ------------------------------------------------------------------------------
    @property
    def spent(self) -> float:
        return self.base + self.settled

    def reserved(self) -> float:
        now = time.time()
        total = 0.0
        for entry in self.open.values():
            if entry.get("lasting"):
                if now - float(entry.get("time", now)) <= LASTING_SECONDS:
                    total += float(entry["cost"])
                continue
            own_host = entry.get("host") == self.host
            if own_host and entry.get("pid") != self.pid and not _alive(int(entry["pid"])):
                continue
            if not own_host and now - float(entry.get("time", now)) > STALE_SECONDS:
                continue
            total += float(entry["cost"])
        return total

    # --- the operations ------------------------------------------------------------------------
    def reserve(self, estimate: float, lasting: bool = False) -> str | None:
        """A reservation id, or None when the estimate does not fit in what is left;
        ``lasting``: a batch job's, counted until settled even after this process ends."""
        with self._locked() as handle:
            committed = self.spent + self.reserved()
            if committed >= self.limit or committed + estimate > self.limit:
                return None
            ticket = f"{self.host}:{self.pid}:{time.time_ns()}:{next(self._ids)}"
            entry = {"reserve": ticket, "cost": float(estimate), "host": self.host,
                     "pid": self.pid, "time": time.time()}
            self._append(handle, {**entry, "lasting": True} if lasting else entry)
            return ticket

    def settle(self, ticket: str, cost: float) -> None:
        with self._locked() as handle:
            self._append(handle, {"settle": ticket, "cost": float(cost)})

    def release(self, ticket: str) -> None:
        with self._locked() as handle:
            self._append(handle, {"release": ticket})

    def view(self) -> tuple[float, float]:
        """(spent, reserved by calls in flight), read now."""
        with self._locked():
            return self.spent, self.reserved()
