"""A local OpenAI-compatible server (127.0.0.1, free port) with planted judges, for the tests and
the runner benchmark. Standard library only; one thread per connection (HTTP/1.1 keep-alive).

Models it serves (the request's ``model``):

* ``translator``: full translation -> ``"[zh] " + text``, code-switched -> ``"[cs] " + text``;
* any model in ``pairwise``: a pairwise judge with planted
  :class:`polyjudge.analyses.judge_ls.JudgeEffects` (accuracy, flips, position bias, ties, tie-probe
  language preference) and an ``unparseable`` rate. Items are recognised by markers the test
  items carry: ``<<good|1>>`` / ``<<bad|2>>`` (quality and original index) at the start of each output,
  ``<<item:ID>>`` in the instruction, a ``[zh] `` / ``[cs] ``
  prefix for translated text;
* any model in ``pointwise``: a 1-5 scorer, score = :meth:`JudgeServer.planted_score`;
* ``echo``: answers at once with a fixed reply (benchmark).

Every draw is a hash of (model, item, ...), so the same request always gets the same answer and
a run is reproducible. Faults (``faults``: rate per kind) are drawn from a hash of the request:
``429`` (with Retry-After) and ``500`` happen on the first time a request is seen only, ``slow``
sleeps before answering, ``length`` answers a cut-off reply with finish_reason ``length``;
``latency`` delays every answer (calls stay in flight that long).
Usage is counted per model for every 200 reply; ``log`` lists every request (body hash, model,
status).
"""
from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import Counter, defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from polyjudge.analyses import judge_ls

_OUTPUT = re.compile(r"(?:\[(zh|cs)\] )?<<(good|bad)\|([12])>>")
_ITEM = re.compile(r"<<item:([^>]+)>>")
_LANG = re.compile(r"<<lang:([^>]+)>>")


def uniform(*parts) -> float:
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()
    return int(digest[:15], 16) / 16**15


def tokens(text: str) -> int:
    return len(text) // 4 + 1


class JudgeServer:
    def __init__(self, pairwise=None, pointwise=None, faults=None, unparseable=None,
                 retry_after=0.05, slow_seconds=0.2, api_key=None, latency=0.0):
        self.pairwise = pairwise or {}
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
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out at once (no 40 ms stall)

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                status, payload, headers = server.handle(body, self.headers)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client went away
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda request, address: None  # a client that went away
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    # --- planted behaviour -------------------------------------------------------------------
    def planted_score(self, model: str, item: str, language: str, side: str) -> int:
        """Chosen: 4 or 5, rejected: 2 or 3, shifted by the model's per-language offset."""
        base = {"chosen": 4, "rejected": 2}[side] + (uniform(model, item, language, side) < 0.5)
        return int(min(5, max(1, base + self.pointwise[model].get(language, 0))))

    def _pairwise(self, model: str, content: str) -> str:
        effects = self.pairwise[model]
        item = _ITEM.search(content).group(1)
        (lang_a, q_a, index_a), (lang_b, q_b, _) = _OUTPUT.findall(content)[-2:]
        lang_a, lang_b = lang_a or "en", lang_b or "en"
        if q_a == q_b == "good":  # tie probe: output A and B are the gold output in two languages
            order = "original" if lang_a == "en" else "swapped"
            content_choice = 2 if uniform(model, item, order, "probe") < effects.probe_prefer_2 else 1
            translated_first = order == "swapped"
            letter = "A" if (content_choice == 2) == translated_first else "B"
            tie, bias = effects.probe_tie, effects.probe_position_bias
            condition = "tie_probe"
        else:
            condition = lang_a
            order = "original" if index_a == "1" else "swapped"
            reference = effects.reference
            correct_ref = uniform(model, item, "correct", reference) < effects.accuracy[reference]
            if condition == reference:
                correct = correct_ref
            else:
                joint = effects.joint_correctness(condition)
                p = joint[1, 1] / joint[1].sum() if correct_ref else joint[0, 1] / joint[0].sum()
                correct = uniform(model, item, "correct", condition) < p
            good_letter = "A" if q_a == "good" else "B"
            letter = good_letter if correct else ("B" if good_letter == "A" else "A")
            tie, bias = effects.tie_rate[condition], effects.position_bias[condition]
        u = uniform(model, item, condition, order, "verdict")
        return "Tie" if u < tie else ("A" if u < tie + (1 - tie) * bias else letter)

    def reply(self, request: dict) -> str:
        model = request["model"]
        messages = request["messages"]
        content = messages[-1]["content"]
        structured = request.get("response_format") is not None
        if model == "echo":
            return "ok"
        if model == "translator":
            text = content.rsplit("Text:\n", 1)[1].rstrip("\n")
            system = messages[0]["content"]
            return ("[cs] " if "bilingual" in system else "[zh] ") + text
        if uniform(json.dumps(messages), "unparseable") < self.unparseable.get(model, 0.0):
            return "I cannot decide between them."
        if model in self.pairwise:
            verdict = self._pairwise(model, content)
            return json.dumps({"verdict": verdict}) if structured else {
                "A": "Output (a)", "B": "Output (b)", "Tie": "Tie"}[verdict]
        if model in self.pointwise:
            item = _ITEM.search(content).group(1)
            language = _LANG.search(content).group(1)
            side = "chosen" if "<<good|" in content else "rejected"
            score = self.planted_score(model, item, language, side)
            return json.dumps({"score": score}) if structured else f"Score: {score}"
        raise KeyError(model)

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
        u = uniform(digest, "fault")
        rates = self.faults
        edges = {}
        total = 0.0
        for kind in ("429", "500", "slow", "length"):
            edges[kind] = (total, total + rates.get(kind, 0.0))
            total += rates.get(kind, 0.0)
        fault = next((k for k, (lo, hi) in edges.items() if lo <= u < hi), None)
        if fault == "429" and first:
            return self._logged(digest, model, 429, {"error": {"message": "rate limited"}},
                                {"Retry-After": str(self.retry_after)})
        if fault == "500" and first:
            return self._logged(digest, model, 500, {"error": {"message": "server error"}}, {})
        if fault == "slow":
            time.sleep(self.slow_seconds)
        if self.latency:
            time.sleep(self.latency)
        text = self.reply(request)
        finish = "stop"
        if fault == "length" and model != "echo":
            text, finish = text[: max(1, len(text) // 3)], "length"
        prompt_tokens = sum(tokens(m["content"]) for m in request["messages"])
        completion_tokens = tokens(text)
        payload = {"id": "chatcmpl-" + digest[:12], "object": "chat.completion", "created": 0,
                   "model": model,
                   "choices": [{"index": 0, "finish_reason": finish,
                                "message": {"role": "assistant", "content": text}}],
                   "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                             "total_tokens": prompt_tokens + completion_tokens}}
        with self.lock:
            usage = self.usage[model]
            usage["requests"] += 1
            usage["input_tokens"] += prompt_tokens
            usage["output_tokens"] += completion_tokens
        return self._logged(digest, model, 200, payload, {})

    def _logged(self, digest, model, status, payload, headers):
        with self.lock:
            self.log.append({"body": digest, "model": model, "status": status})
        return status, payload, headers


def default_pairwise_judges() -> dict:
    """Two planted judges (the Judge-LS synthetic defaults, judge_a and judge_b)."""
    return judge_ls.default_judges()


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
