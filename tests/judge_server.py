"""A local OpenAI-compatible server (127.0.0.1, free port) with planted judges, for the tests and
the runner benchmark. Standard library only; one thread per connection (HTTP/1.1 keep-alive).

Models it serves (the request's ``model``):

* ``translator``: full translation -> ``"[zh] " + text``, code-switched -> ``"[cs] " + text``;
* any model in ``pairwise``: a pairwise judge with planted
  :class:`polyjudge.analyses.judge_ls.JudgeEffects` (accuracy, flips, position bias, ties,
  tie-probe language preference) and an ``unparseable`` rate. Items are recognised by markers
  the test items carry: ``<<good|1>>`` / ``<<bad|2>>`` (quality and original index) at the start
  of each output, ``<<item:ID>>`` in the instruction, a ``[zh] `` / ``[cs] `` prefix for
  translated text;
* any model in ``pointwise``: a 1-5 scorer, score = :meth:`JudgeServer.planted_score`
  (``shared_quality``: the scorers agree on each item; ``unparseable_low``: a scorer fails to
  answer where its chosen-side score would be low);
* ``echo``: answers at once with a fixed reply (benchmark).

Every draw is a hash of (model, item, ...), so the same request always gets the same answer and
a run is reproducible (the planted judges' answers: tests/planted_judges.py). Faults
(``faults``: rate per kind) are drawn from a hash of the request: ``429`` (with Retry-After) and
``500`` happen on the first time a request is seen only, ``slow`` sleeps before answering,
``length`` answers a cut-off reply with finish_reason ``length``;
``latency`` delays every answer (calls stay in flight that long).
Usage is counted per model for every 200 reply; ``log`` lists every request (body hash, model,
status).

The OpenAI Batch protocol too: ``POST /v1/files`` (multipart, purpose ``batch``),
``GET /v1/files/{id}/content``, ``POST /v1/batches``, ``GET /v1/batches/{id}``,
``GET /v1/batches`` (newest first, ``after`` / ``limit``), ``POST /v1/batches/{id}/cancel``. A
batch is run by a thread of its own from the moment it is created, so it completes whether or
not anyone polls; each request is answered as the same request sent alone (``reply``, usage
counted, the ``length`` fault kept; 429 / 500 / slow are for requests sent alone). Knobs:
``batch_delay`` (seconds before the first request runs), ``batch_request_delay`` (per request),
``batch_errors`` (rate of requests failing with status 400, code ``planted_error``, every
time) and ``batch_transient`` (rate of requests failing with status 500, type ``server_error``,
the first time a batch runs them only), both drawn from the body hash, so the same requests fail
in every test run (a request it cannot answer, e.g. an unknown model, fails alone as
``invalid_request``),
``batch_expire`` (a batch expires after that share of its requests) for the first
``batch_expire_batches`` batches (None: all), ``batch_malformed`` (the output file's second line
is cut in half). ``batch_log`` lists every request a batch ran (batch, custom_id, body hash,
model, status); ``log`` gets the same line, so "no request answered twice" covers both ways.
The body hash is the SHA-256 of the request's bytes as sent alone, and of the canonical JSON of
the body (sorted keys) in a batch.
"""
from __future__ import annotations

import email.policy
import hashlib
import json
import threading
import time
from collections import Counter, defaultdict
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from planted_judges import PlantedJudges, default_pairwise_judges, uniform  # noqa: F401


def tokens(text: str) -> int:
    return len(text) // 4 + 1


def body_hash(body: dict) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def _not_found(what: str):
    return 404, {"error": {"message": f"{what} not found", "type": "invalid_request_error"}}, {}


class _Server(ThreadingHTTPServer):
    # listen() backlog: the default 5 drops the SYNs of a burst of new connections (shards x
    # concurrency at a round's start), and each dropped one waits 1 s for its retransmission
    request_queue_size = 128


class JudgeServer(PlantedJudges):
    def __init__(self, pairwise=None, pointwise=None, faults=None, unparseable=None,
                 retry_after=0.05, slow_seconds=0.2, api_key=None, latency=0.0, batch_delay=0.0,
                 batch_request_delay=0.0, batch_errors=0.0, batch_transient=0.0,
                 batch_expire=None, batch_expire_batches=None, batch_malformed=False,
                 shared_quality=False, unparseable_low=None):
        self.pairwise = pairwise or {}
        self.shared_quality, self.unparseable_low = shared_quality, unparseable_low or {}
        self.pointwise = pointwise or {}
        self.faults = faults or {}
        self.unparseable = unparseable or {}
        self.retry_after, self.slow_seconds, self.api_key = retry_after, slow_seconds, api_key
        self.latency = latency  # seconds before every answer (calls stay in flight that long)
        self.lock = threading.Lock()
        self.log: list[dict] = []
        self.seen = Counter()
        self.usage = defaultdict(lambda: {"requests": 0, "input_tokens": 0, "output_tokens": 0})
        self.authorization = set()
        self.batch_delay, self.batch_request_delay = batch_delay, batch_request_delay
        self.batch_errors, self.batch_expire = batch_errors, batch_expire
        self.batch_transient = batch_transient
        self.batch_seen = Counter()  # body hash -> times a batch ran it
        self.batch_expire_batches, self.batch_malformed = batch_expire_batches, batch_malformed
        self.files: dict[str, dict] = {}
        self.batches: dict[str, dict] = {}
        self.batch_log: list[dict] = []
        self.batch_created = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out at once (no 40 ms stall)

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.path.rstrip("/").endswith("/chat/completions"):
                    self.answer(*server.handle(body, self.headers))
                else:
                    self.answer(*server.batch_api("POST", self.path, body, self.headers))

            def do_GET(self):
                self.answer(*server.batch_api("GET", self.path, b"", self.headers))

            def answer(self, status, payload, headers):
                raw = isinstance(payload, bytes)
                data = payload if raw else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type",
                                 "application/octet-stream" if raw else "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client went away
                    pass

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda request, address: None  # a client that went away
        # a 0.05 s poll: __exit__ returns at once, not after up to 0.5 s (the default)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    def handle(self, body: bytes, headers):
        request = json.loads(body)
        digest = hashlib.sha256(body).hexdigest()
        model = request.get("model")
        with self.lock:
            self.seen[digest] += 1
            first = self.seen[digest] == 1
            self.authorization.add(headers.get("Authorization"))
        if self.api_key is not None and headers.get("Authorization") != f"Bearer {self.api_key}":
            return self._logged(digest, model, 401, {"error": {"message": "bad key"}}, {})
        fault = self.fault_of(digest)
        if fault == "429" and first:
            return self._logged(digest, model, 429, {"error": {"message": "rate limited"}},
                                {"Retry-After": str(self.retry_after)})
        if fault == "500" and first:
            return self._logged(digest, model, 500, {"error": {"message": "server error"}}, {})
        if fault == "slow":
            time.sleep(self.slow_seconds)
        if self.latency:
            time.sleep(self.latency)
        return self._logged(digest, model, 200, self.completion(request, digest, fault), {})

    def completion(self, request: dict, digest: str, fault: str | None) -> dict:
        """The chat.completion object answering ``request``, with its usage counted."""
        model = request["model"]
        text = self.reply(request)
        finish = "stop"
        if fault == "length" and model != "echo":
            text, finish = text[: max(1, len(text) // 3)], "length"
        prompt_tokens = sum(tokens(m["content"]) for m in request["messages"])
        completion_tokens = tokens(text)
        with self.lock:
            usage = self.usage[model]
            usage["requests"] += 1
            usage["input_tokens"] += prompt_tokens
            usage["output_tokens"] += completion_tokens
        return {"id": "chatcmpl-" + digest[:12], "object": "chat.completion", "created": 0,
                "model": model,
                "choices": [{"index": 0, "finish_reason": finish,
                             "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                          "total_tokens": prompt_tokens + completion_tokens}}

    def fault_of(self, digest: str) -> str | None:
        u = uniform(digest, "fault")
        total = 0.0
        for kind in ("429", "500", "slow", "length"):
            if total <= u < total + self.faults.get(kind, 0.0):
                return kind
            total += self.faults.get(kind, 0.0)
        return None

    # --- the Batch protocol -----------------------------------------------------------------
    def batch_api(self, method: str, path: str, body: bytes, headers):
        if self.api_key is not None and headers.get("Authorization") != f"Bearer {self.api_key}":
            return 401, {"error": {"message": "bad key"}}, {}
        url = urlsplit(path)
        parts = [p for p in url.path.split("/") if p][1:]  # after /v1
        query = parse_qs(url.query)
        with self.lock:
            if method == "POST" and parts == ["files"]:
                return self._upload(body, headers.get("Content-Type", ""))
            if (method == "GET" and len(parts) == 3 and parts[0] == "files"
                    and parts[2] == "content"):
                file = self.files.get(parts[1])
                return (200, file["data"], {}) if file else _not_found(f"file {parts[1]}")
            if method == "GET" and len(parts) == 2 and parts[0] == "files":
                file = self.files.get(parts[1])
                return (200, file["object"], {}) if file else _not_found(f"file {parts[1]}")
            if method == "POST" and parts == ["batches"]:
                try:
                    request = json.loads(body or b"{}")
                except ValueError:
                    return 400, {"error": {"message": "the body is not JSON"}}, {}
                return self._create(request)
            if method == "GET" and parts == ["batches"]:
                return self._list(int(query.get("limit", ["20"])[0]),
                                  query.get("after", [None])[0])
            if parts[:1] == ["batches"] and len(parts) >= 2:
                batch = self.batches.get(parts[1])
                if batch is None:
                    return _not_found(f"batch {parts[1]}")
                if method == "GET" and len(parts) == 2:
                    return 200, dict(batch), {}
                if method == "POST" and parts[2:] == ["cancel"]:
                    if batch["status"] in ("validating", "in_progress"):
                        batch.update(status="cancelling", cancelling_at=int(time.time()))
                    return 200, dict(batch), {}
        return _not_found(path)

    def _upload(self, body: bytes, content_type: str):
        message = BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body)
        fields = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            fields[name] = (part.get_filename(), part.get_payload(decode=True))
        if fields.get("purpose", (None, b""))[1] != b"batch" or "file" not in fields:
            return 400, {"error": {"message": "purpose must be batch, with a file"}}, {}
        name, data = fields["file"]
        file_id = "file-" + hashlib.sha256(data + str(len(self.files)).encode()).hexdigest()[:24]
        return 200, self._store_file(file_id, data, name, "batch"), {}

    def _store_file(self, file_id: str, data: bytes, name: str, purpose: str) -> dict:
        """Keep a file (an upload or a batch's output) and return its FileObject."""
        self.files[file_id] = {"data": data, "object": {
            "id": file_id, "object": "file", "bytes": len(data), "created_at": int(time.time()),
            "filename": name, "purpose": purpose, "status": "processed"}}
        return self.files[file_id]["object"]

    def _create(self, request: dict):
        if request.get("input_file_id") not in self.files:
            return 400, {"error": {"message": f"no file {request.get('input_file_id')}"}}, {}
        if request.get("endpoint") != "/v1/chat/completions":
            return 400, {"error": {"message": "endpoint must be /v1/chat/completions"}}, {}
        if request.get("completion_window") != "24h":
            return 400, {"error": {"message": "completion_window must be 24h"}}, {}
        self.batch_created += 1
        number = self.batch_created
        batch_id = f"batch_{number:04d}" + hashlib.sha256(str(time.time_ns()).encode()
                                                          ).hexdigest()[:8]
        now = int(time.time())
        batch = {"id": batch_id, "object": "batch", "endpoint": request["endpoint"],
                 "errors": None, "input_file_id": request["input_file_id"],
                 "completion_window": "24h", "status": "validating", "output_file_id": None,
                 "error_file_id": None, "created_at": now, "in_progress_at": None,
                 "expires_at": now + 86400, "finalizing_at": None, "completed_at": None,
                 "failed_at": None, "expired_at": None, "cancelling_at": None,
                 "cancelled_at": None,
                 "request_counts": {"total": 0, "completed": 0, "failed": 0},
                 "metadata": request.get("metadata")}
        self.batches[batch_id] = batch
        expires = self.batch_expire is not None and (self.batch_expire_batches is None
                                                     or number <= self.batch_expire_batches)
        threading.Thread(target=self._work, args=(batch, expires), daemon=True).start()
        return 200, dict(batch), {}

    def _list(self, limit: int, after: str | None):
        ids = list(self.batches)[::-1]
        start = ids.index(after) + 1 if after in ids else 0
        page = [dict(self.batches[i]) for i in ids[start:start + limit]]
        return 200, {"object": "list", "data": page,
                     "first_id": page[0]["id"] if page else None,
                     "last_id": page[-1]["id"] if page else None,
                     "has_more": start + limit < len(ids)}, {}

    def _work(self, batch: dict, expires: bool):
        """Validate, then answer every request (a thread per batch), then write the files."""
        lines = self.files[batch["input_file_id"]]["data"].decode().splitlines()
        requests, problems = [], []
        for number, line in enumerate(lines, 1):
            try:
                entry = json.loads(line)
                ok = (isinstance(entry.get("body"), dict) and entry.get("method") == "POST"
                      and entry.get("url") == "/v1/chat/completions"
                      and isinstance(entry.get("custom_id"), str))
            except (ValueError, AttributeError):
                ok, entry = False, {}
            if not ok or entry["custom_id"] in {r["custom_id"] for r in requests}:
                problems.append({"code": "invalid_request", "line": number,
                                 "message": "not a request line (custom_id, method POST, "
                                            "url /v1/chat/completions, body), or a custom_id "
                                            "used twice"})
            else:
                requests.append(entry)
        with self.lock:
            if problems:
                batch.update(status="failed", failed_at=int(time.time()),
                             errors={"object": "list", "data": problems})
                return
            if batch["status"] == "validating":  # not if cancelled meanwhile
                batch.update(status="in_progress", in_progress_at=int(time.time()))
            batch["request_counts"] = {"total": len(requests), "completed": 0, "failed": 0}
        deadline = time.monotonic() + self.batch_delay
        while time.monotonic() < deadline and batch["status"] != "cancelling":  # a prompt cancel
            time.sleep(min(0.01, max(0.0, deadline - time.monotonic())))
        limit = int(self.batch_expire * len(requests)) if expires else len(requests)
        output, errors = [], []
        for index, entry in enumerate(requests):
            with self.lock:
                cancelling = batch["status"] == "cancelling"
            if index >= limit or cancelling:
                code = "batch_cancelled" if cancelling else "batch_expired"
                errors.extend({"id": f"batch_req_{batch['id']}_{i}", "custom_id": e["custom_id"],
                               "response": None, "error": {"code": code, "message":
                                                           f"not run: {code}"}}
                              for i, e in enumerate(requests[index:], index))
                break
            time.sleep(self.batch_request_delay)
            body, custom_id = entry["body"], entry["custom_id"]
            digest = body_hash(body)
            line = {"id": f"batch_req_{batch['id']}_{index}", "custom_id": custom_id,
                    "error": None}
            planted = self.planted_batch_error(digest)
            if planted is not None:
                status = planted["status_code"]
                line["response"] = {**planted, "request_id": digest[:16]}
                errors.append(line)
            else:
                fault = "length" if self.fault_of(digest) == "length" else None
                try:
                    status, answer = 200, self.completion(body, digest, fault)
                except Exception as exc:  # an unknown model: that request fails, not the worker
                    status, answer = 400, {"error": {"message": f"cannot answer: {exc!r}",
                                                     "type": "invalid_request_error",
                                                     "code": "invalid_request"}}
                line["response"] = {"status_code": status, "request_id": digest[:16],
                                    "body": answer}
                (output if status == 200 else errors).append(line)
            with self.lock:
                self.batch_log.append({"batch": batch["id"], "custom_id": custom_id,
                                       "body": digest, "model": body.get("model"),
                                       "status": status})
                self.log.append({"body": digest, "model": body.get("model"), "status": status,
                                 "batch": batch["id"]})
                batch["request_counts"]["completed" if status == 200 else "failed"] += 1
        texts = [json.dumps(line) for line in output]
        if self.batch_malformed and len(texts) > 1:
            texts[1] = texts[1][: len(texts[1]) // 2]
        with self.lock:
            batch.update(status="finalizing", finalizing_at=int(time.time()))
            for field, rows in (("output_file_id", texts),
                                ("error_file_id", [json.dumps(e) for e in errors])):
                if rows:
                    file_id = f"file-{field[:3]}-{batch['id']}"
                    self._store_file(file_id, ("\n".join(rows) + "\n").encode(),
                                     f"{file_id}.jsonl", "batch_output")
                    batch[field] = file_id
            now = int(time.time())
            if batch["status"] == "cancelling" or any(
                    e["error"] and e["error"]["code"] == "batch_cancelled" for e in errors):
                batch.update(status="cancelled", cancelled_at=now)
            elif limit < len(requests):
                batch.update(status="expired", expired_at=now)
            else:
                batch.update(status="completed", completed_at=now)

    def planted_batch_error(self, digest: str) -> dict | None:
        """The error response a batch gives the request with body hash ``digest``: 400 for a
        ``batch_errors`` share, 500 for a ``batch_transient`` share the first time it runs."""
        u = uniform(digest, "batch_error")
        with self.lock:
            self.batch_seen[digest] += 1
            first = self.batch_seen[digest] == 1
        if u < self.batch_errors:
            return {"status_code": 400, "body": {"error": {
                "message": "planted request error", "type": "invalid_request_error",
                "code": "planted_error"}}}
        if u < self.batch_errors + self.batch_transient and first:
            return {"status_code": 500, "body": {"error": {
                "message": "The server had an error processing your request", "type":
                "server_error", "code": None}}}
        return None

    def _logged(self, digest, model, status, payload, headers):
        with self.lock:
            self.log.append({"body": digest, "model": model, "status": status})
        return status, payload, headers


if __name__ == "__main__":  # a server to point a manual run at
    import sys
    with JudgeServer(pairwise=default_pairwise_judges(),
                     pointwise={"scorer_x": {"zh": -1}, "scorer_y": {}}) as server:
        print(server.base_url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            sys.exit(0)
