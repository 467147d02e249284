"""Overhead of the judge runner: calls per second against a local server that answers at once.

Starts tests/judge_server.py on 127.0.0.1 (model ``echo``: a fixed reply, no delay) and runs
``--calls`` distinct calls through :func:`polyjudge.judges.run_calls` at each concurrency, with a
fresh cache file each time (so every call is sent and stored), then once more from the cache.
The server runs in its own process (``--same-process`` puts it in this one, sharing the GIL),
so what is measured is the client's own cost (openai client, retry wrapper, cache writes,
parsing) plus one stdlib server thread per connection: a lower bound on the throughput a real
endpoint allows.

    python benchmarks/runner_overhead.py [--calls 2000] [--concurrency 1 8 64] [--same-process]
"""
from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from judge_server import JudgeServer  # noqa: E402

from polyjudge.judges import AnswerFormat, CallCache, Endpoint, call_key, run_calls  # noqa: E402
from polyjudge.judges.runner import Call  # noqa: E402


def calls_for(endpoint: Endpoint, n: int) -> list[Call]:
    out = []
    for i in range(n):
        messages = [{"role": "user", "content": f"Say ok ({i})."}]
        out.append(Call(call_key(endpoint.identity(), messages), messages, None, {"i": i}))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 64])
    parser.add_argument("--same-process", action="store_true")
    args = parser.parse_args()
    answer = AnswerFormat(kind="text")
    print(f"{'concurrency':>11} {'calls':>6} {'seconds':>8} {'calls/s':>8} {'cached calls/s':>15}")
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory())
        if args.same_process:
            base_url = stack.enter_context(JudgeServer()).base_url
        else:
            server = stack.enter_context(subprocess.Popen(
                [sys.executable, str(Path(__file__).resolve().parents[1] / "tests" /
                                     "judge_server.py")], stdout=subprocess.PIPE, text=True))
            stack.callback(server.terminate)
            base_url = server.stdout.readline().strip()
        for concurrency in args.concurrency:
            endpoint = Endpoint("echo", base_url, "echo", max_concurrency=concurrency)
            calls = calls_for(endpoint, args.calls)
            path = Path(tmp) / f"c{concurrency}.jsonl"
            start = time.perf_counter()
            results = run_calls(calls, endpoint, CallCache(path), answer, progress_interval=3600)
            sent = time.perf_counter() - start
            assert all(r["status"] == "ok" and not r["cached"] for r in results)
            start = time.perf_counter()
            cached = run_calls(calls, endpoint, CallCache(path), answer, progress_interval=3600)
            again = time.perf_counter() - start
            assert all(r["cached"] for r in cached)
            print(f"{concurrency:>11} {args.calls:>6} {sent:>8.2f} {args.calls / sent:>8.0f} "
                  f"{args.calls / again:>15.0f}")


if __name__ == "__main__":
    main()
