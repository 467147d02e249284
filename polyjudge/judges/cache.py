"""The call store: one append-only JSON-lines file per shard, keyed by the exact request.

Key (:func:`call_key`): SHA-256 of the endpoint's identity (base URL, model, generation settings),
the rendered messages, the response format and the repeat index: a repeat is a distinct call
(Inspect AI's epoch), and changing one judge's settings changes only that judge's keys.

Only successful calls are stored (a failed call is retried next time). A record keeps the raw
reply, the parse at call time (re-done on reading), finish reason, usage, cost and latency. Each
shard job appends to its own file and reads its peers' files (same endpoint, stage and
collection) read-only, so shards never share a database or a lock, and re-sharding or a restart
finds every finished call. A line cut short by a killed process is ignored.

Layout: ``<cache_dir>/<collection>/<stage>/<endpoint>/shard<k>.jsonl``.
"""
from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Iterable, Iterator

from ..data import jsonfile

log = logging.getLogger("polyjudge.judges.cache")


def canonical_json(value) -> str:
    """Strict, compact JSON with sorted keys: a request's key and a stored line."""
    return jsonfile.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def call_key(identity: dict, messages: list[dict], response_format: dict | None = None,
             repeat: int = 0) -> str:
    """Hex SHA-256 of the request (see module docstring); stable across runs and machines."""
    payload = {"endpoint": identity, "messages": messages, "response_format": response_format,
               "repeat": repeat}
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()


def read_records(path) -> Iterator[dict]:
    """Records of one cache file; a truncated or corrupt line (killed writer) is skipped."""
    path = Path(path)
    if not path.is_file():
        return
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            try:
                record = json.loads(line)
            except ValueError:
                log.warning("%s line %d is incomplete (interrupted write); ignored", path, number)
                continue
            if isinstance(record, dict) and "key" in record:
                yield record


def shard_file(cache_dir, collection: str, stage: str, endpoint: str, shard: int) -> Path:
    return Path(cache_dir) / collection / stage / endpoint / f"shard{shard}.jsonl"


class CallCache:
    """Lookup over a shard's own file and its peers'; appends go to the own file only."""

    def __init__(self, path, peers: Iterable = ()):
        self.path = Path(path)
        self.records: dict[str, dict] = {}
        for peer in sorted({Path(p) for p in peers} | {self.path}):
            for record in read_records(peer):
                self.records.setdefault(record["key"], record)
        self._handle = None

    def __len__(self):
        return len(self.records)

    def get(self, key: str) -> dict | None:
        return self.records.get(key)

    def put(self, record: dict) -> None:
        """Append one finished call (flushed at once, so a kill loses at most that line)."""
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.is_file() and self.path.stat().st_size:
                with open(self.path, "rb") as existing:  # a torn last line must not glue on
                    existing.seek(-1, 2)
                    torn = existing.read(1) != b"\n"
            else:
                torn = False
            self._handle = open(self.path, "a", encoding="utf-8")
            if torn:
                self._handle.write("\n")
        self._handle.write(canonical_json(record) + "\n")
        self._handle.flush()
        self.records[record["key"]] = record

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    @classmethod
    def for_shard(cls, cache_dir, collection: str, stage: str, endpoint: str, shard: int
                  ) -> "CallCache":
        own = shard_file(cache_dir, collection, stage, endpoint, shard)
        return cls(own, own.parent.glob("shard*.jsonl") if own.parent.is_dir() else ())


def spent(cache_dir, collection: str) -> float:
    """USD recorded in every cache file of a collection (each call counted once)."""
    costs = {}
    for path in sorted(Path(cache_dir, collection).glob("*/*/shard*.jsonl")):
        for record in read_records(path):
            costs[record["key"]] = record.get("cost") or 0.0
    return float(sum(costs.values()))
