"""The pure parts of polyjudge.judges (hashing, parsing, plans, retry schedule, tables) and the
runner against the local server (tests/judge_server.py): retries, truncation, cache, cost cap."""
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judge_items import pairwise_items, pointwise_items
from judge_server import JudgeServer, default_pairwise_judges
from polyjudge.judges import (AnswerFormat, Budget, CallCache, Endpoint, RetryPolicy, Stopped,
                             backoff_delay, call_key, load_prompt, parse_answer, plan_table,
                             plan_totals, protocols, readable_cost, run_calls)
from polyjudge.judges.runner import progress_line

REPO = Path(__file__).resolve().parents[1]
PROMPTS = REPO / "config" / "prompts"


def prompt(name):
    return load_prompt(PROMPTS / f"{name}.yaml")


def protocols_items(frame):
    """An item table as read_items returns it (keys as strings), without a file."""
    return frame.astype({"subset": str, "item_index": str, "label": str})


# --- hashing ------------------------------------------------------------------------------------
def test_call_key_is_stable_and_covers_what_changes_a_reply():
    endpoint = Endpoint("j", "http://x/v1", "m", temperature=0.0, max_tokens=10, seed=1)
    messages = [{"role": "user", "content": "héllo"}]
    key = call_key(endpoint.identity(), messages)
    # a known value: the key must not change between versions, or every cache is lost
    assert key == call_key({"model": "m", "max_tokens": 10, "base_url": "http://x/v1",
                            "temperature": 0.0, "seed": 1}, [{"content": "héllo", "role": "user"}])
    assert key == "d12cf4e9cddb45de5678da2bf70c8c5ba0ca35df090c29cdf30af21b204c7995"
    changed = [
        call_key(Endpoint("j", "http://y/v1", "m", temperature=0.0, max_tokens=10, seed=1).identity(), messages),
        call_key(Endpoint("j", "http://x/v1", "m2", temperature=0.0, max_tokens=10, seed=1).identity(), messages),
        call_key(Endpoint("j", "http://x/v1", "m", temperature=0.5, max_tokens=10, seed=1).identity(), messages),
        call_key(endpoint.identity(), messages, repeat=1),
        call_key(endpoint.identity(), messages, {"type": "json_schema"}),
        call_key(endpoint.identity(), [{"role": "user", "content": "hello"}]),
    ]
    assert len(set(changed) | {key}) == 7
    # limits, prices, the key's variable and the endpoint's name do not change replies
    other = Endpoint("renamed", "http://x/v1/", "m", temperature=0.0, max_tokens=10, seed=1, max_concurrency=3,
                     price_input_per_million=9.0, api_key_env="OTHER")
    assert call_key(other.identity(), messages) == key


def test_prompt_hash_is_content_hash(tmp_path):
    text = (PROMPTS / "pairwise_llmbar.yaml").read_text()
    copy = tmp_path / "mine.yaml"
    copy.write_text(text)
    assert load_prompt(copy).digest == prompt("pairwise_llmbar").digest
    copy.write_text(text.replace("helpful assistant", "careful assistant"))
    assert load_prompt(copy).digest != prompt("pairwise_llmbar").digest
    with pytest.raises(ValueError, match="placeholder"):
        load_prompt(copy, ["instruction", "missing_field"])


def test_render_fills_placeholders_and_keeps_other_braces():
    messages = prompt("pairwise_llmbar").render(
        {"instruction": "say {x}", "output_a": "a", "output_b": "b"})
    assert '{"verdict": "A"}' in messages[1]["content"] and "say {x}" in messages[1]["content"]
    with pytest.raises(KeyError, match="output_b"):
        prompt("pairwise_llmbar").render({"instruction": "i", "output_a": "a"})


# --- parsing ------------------------------------------------------------------------------------
@pytest.mark.parametrize("reply, expected", [
    ('{"verdict": "B"}', ("B", "ok")), ("```json\n{\"verdict\": \"Tie\"}\n```", ("Tie", "ok")),
    ("Output (a)", ("A", "ok")), ("After thinking, Output (b) is a better one.", ("B", "ok")),
    ("B", ("B", "ok")), ("tie.", ("Tie", "ok")), ("a good answer", (None, "parse_failure")),
    ("", (None, "parse_failure")), (None, (None, "parse_failure")),
    ('{"verd', (None, "parse_failure")), ('{"verdict": "C"}', (None, "parse_failure")),
])
def test_pairwise_parse(reply, expected):
    assert parse_answer(reply, prompt("pairwise_llmbar").answer) == expected


@pytest.mark.parametrize("reply, expected", [
    ('{"score": 4}', (4, "ok")), ("Score: 5", (5, "ok")),
    ("{\"score\": 6}", (None, "parse_failure")), ("4.5", (None, "parse_failure")),
    ("no idea", (None, "parse_failure")), ('{"score": 3.0}', (3, "ok")),
    ("15", (None, "parse_failure")),
])
def test_score_parse(reply, expected):
    assert parse_answer(reply, prompt("pointwise_rubric").answer) == expected


def test_answer_format_checks_its_spec():
    with pytest.raises(ValueError, match="labels"):
        AnswerFormat.from_spec({"kind": "label", "pattern": "(a)"})
    with pytest.raises(ValueError, match="unknown"):
        AnswerFormat.from_spec({"kind": "text", "regex": "x"})
    text = AnswerFormat.from_spec({"kind": "text"})
    assert parse_answer("  译文 \n", text) == ("译文", "ok")
    assert text.digest() != AnswerFormat.from_spec({"kind": "integer",
                                                    "pattern": "(\\d)"}).digest()


# --- retry schedule and progress -----------------------------------------------------------------
def test_backoff_delay_doubles_with_jitter_and_honours_retry_after():
    policy = RetryPolicy(max_attempts=6, base_delay=1.0, max_delay=8.0)
    assert [backoff_delay(a, policy, 0.0) for a in range(5)] == [0.5, 1.0, 2.0, 4.0, 4.0]
    assert [backoff_delay(a, policy, 1.0) for a in range(5)] == [1.0, 2.0, 4.0, 8.0, 8.0]
    draws = np.random.default_rng(0).random(1000)
    delays = np.array([backoff_delay(2, policy, u) for u in draws])
    assert delays.min() >= 2.0 and delays.max() <= 4.0 and delays.std() > 0.5
    assert backoff_delay(0, policy, 0.0, retry_after=3.0) == 3.0       # at least Retry-After
    assert backoff_delay(3, policy, 1.0, retry_after=0.1) == 8.0       # never shorter than backoff
    assert backoff_delay(0, policy, 0.0, retry_after=3600) == 8.0      # capped at max_delay


def test_progress_line():
    line = progress_line("ls judge_pairwise a shard 1/2", 60, 100, 20, 2, 3, 10.0, 40)
    assert line == ("ls judge_pairwise a shard 1/2: 60/100 calls (20 cached), 4.0 calls/s, 2 "
                    "failed, 3 unparseable, ETA 10 s")
    # a slow local server (a call every 20 s) is not shown as 0.0 calls/s
    assert "4/12 calls (0 cached), 0.05 calls/s" in progress_line("t", 4, 12, 0, 0, 0, 80.0, 4)


# --- plans and call lists ------------------------------------------------------------------------
def test_pairwise_call_counts_and_plan(tmp_path):
    table = pairwise_items(10)
    table.to_csv(tmp_path / "items.csv", index=False)
    frame = protocols.read_items(tmp_path / "items.csv", "pairwise")
    judge = Endpoint("judge", "http://x/v1", "m", price_input_per_million=1.0,
                     price_output_per_million=2.0)
    translator = Endpoint("tr", "http://x/v1", "t")
    english = protocols.reference_texts(frame)
    calls = protocols.translation_calls(frame, "zh", "Chinese", translator,
                                        prompt("translate_full"))
    calls += protocols.pairwise_calls(frame, {"zh": english, "cs": english}, "en", ["zh"], judge,
                                      prompt("pairwise_llmbar"))
    plan = plan_table(calls, {"judge": judge, "tr": translator})
    rows = plan.set_index(["endpoint", "stage"])
    assert rows.loc[("tr", "translate"), "calls"] == 10 * 3
    # 3 conditions x 2 orders + 2 tie-probe orders per item
    assert rows.loc[("judge", "judge_pairwise"), "calls"] == 10 * (3 * 2 + 2)
    judged = rows.loc[("judge", "judge_pairwise")]
    assert judged["output_tokens"] == 12 * judged["calls"]
    assert judged["cost_usd"] == pytest.approx(
        (judged["input_tokens"] + 2 * judged["output_tokens"]) / 1e6)
    assert "total" not in set(plan["endpoint"])  # data rows only; the totals are apart
    total = plan_totals(plan)
    assert total.iloc[0]["calls"] == plan["calls"].sum() and total.iloc[0]["endpoints"] == 2
    assert plan["batches"].eq(0).all() and plan["batch_wait_hours"].eq(0).all()
    # in batch jobs: 80 judge calls over 3 shards of at most 7 requests -> 3 x ceil(27 / 7)
    batched = Endpoint("judge", "http://x/v1", "m", price_input_per_million=1.0,
                       price_output_per_million=2.0, batch=True, batch_max_requests=7)
    plan = plan_table(calls, {"judge": batched, "tr": translator}, shards=3).set_index("endpoint")
    assert plan.loc["judge", "batches"] == 3 * 4 and plan.loc["judge", "batch_wait_hours"] == 24
    assert plan.loc["judge", "batch_cost_usd"] == pytest.approx(plan.loc["judge", "cost_usd"] / 2)
    assert plan.loc["tr", "batches"] == 0
    total = plan_totals(plan.reset_index()).iloc[0]
    assert total["batches"] == 12 and total["batch_wait_hours"] == 24
    metas = [c.meta for c in calls if c.meta["stage"] == "judge_pairwise"]
    assert len(metas) == 10 * (3 * 2 + 2)
    probes = [m for m in metas if m["gold"] == "Tie"]
    assert {(m["order"], m["probe_language_1"], m["probe_language_2"]) for m in probes} == {
        ("original", "en", "zh"), ("swapped", "en", "zh")}


def test_pointwise_calls_and_first_n_per_language(tmp_path):
    pointwise_items(6, ["en", "zh"]).to_csv(tmp_path / "p.csv", index=False)
    frame = protocols.read_items(tmp_path / "p.csv", "pointwise", n_items=4)
    assert frame.groupby("language").size().to_dict() == {"en": 4, "zh": 4}
    calls = protocols.pointwise_calls(frame, Endpoint("s", "http://x/v1", "s"),
                                      prompt("pointwise_rubric"))
    assert len(calls) == 16 and {c.meta["side"] for c in calls} == {"chosen", "rejected"}
    shards = [protocols.shard_items(frame, 3, k) for k in range(3)]
    assert sum(len(s) for s in shards) == len(frame)
    # every language of an item lands in the same shard
    assert all(s.groupby("item_index")["language"].nunique().eq(2).all() for s in shards)


def test_item_table_errors_name_the_file_and_rows(tmp_path):
    bad = pairwise_items(4).assign(label=[1, 2, 3, 1])
    bad.to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(ValueError, match=r"bad.csv.*label"):
        protocols.read_items(tmp_path / "bad.csv", "pairwise")
    mine = pairwise_items(3).rename(columns={"input": "prompt"})
    mine.to_parquet(tmp_path / "mine.parquet")
    with pytest.raises(ValueError, match="columns"):
        protocols.read_items(tmp_path / "mine.parquet", "pairwise")
    assert len(protocols.read_items(tmp_path / "mine.parquet", "pairwise",
                                    {"input": "prompt"})) == 3


# --- cache --------------------------------------------------------------------------------------
def test_cache_reads_peers_and_skips_a_torn_line(tmp_path):
    own = tmp_path / "c" / "shard0.jsonl"
    peer = tmp_path / "c" / "shard1.jsonl"
    peer.parent.mkdir()
    peer.write_text(json.dumps({"key": "k1", "raw": "A", "cost": 0.5}) + "\n"
                    + '{"key": "k2", "raw": "tor')
    cache = CallCache(own, [peer])
    assert cache.get("k1")["raw"] == "A" and cache.get("k2") is None
    cache.put({"key": "k3", "raw": "B", "cost": 0.25})
    cache.close()
    again = CallCache(own, [peer])
    assert set(again.records) == {"k1", "k3"}
    from polyjudge.judges.cache import spent
    (tmp_path / "cache" / "p" / "stage" / "e").mkdir(parents=True)
    (tmp_path / "c" / "shard0.jsonl").rename(tmp_path / "cache/p/stage/e/shard0.jsonl")
    assert spent(tmp_path / "cache", "p") == 0.25


# --- the runner against the local server ---------------------------------------------------------
def run_judge(server, tmp_path, n=30, structured=True, budget=None, concurrency=8):
    frame = protocols_items(pairwise_items(n))
    endpoint = Endpoint("judge_a", server.base_url, "judge_a", structured_output=structured,
                        max_concurrency=concurrency, timeout=5.0, price_input_per_million=1.0,
                        price_output_per_million=4.0)
    calls = protocols.pairwise_calls(frame, {}, "en", [], endpoint, prompt("pairwise_llmbar"))
    cache = CallCache(tmp_path / "cache.jsonl")
    results = run_calls(protocols.sendable(calls), endpoint, cache,
                        prompt("pairwise_llmbar").answer, policy=RetryPolicy(5, 0.02, 0.2),
                        budget=budget, progress_interval=0.2)
    return calls, results


def test_runner_retries_flags_truncation_and_caches(tmp_path):
    faults = {"429": 0.1, "500": 0.1, "slow": 0.05, "length": 0.05}
    with JudgeServer(pairwise=default_pairwise_judges(), faults=faults,
                     unparseable={"judge_a": 0.05}) as server:
        calls, results = run_judge(server, tmp_path)
        statuses = pd.Series([r["status"] for r in results])
        assert statuses.isin(["ok", "parse_failure"]).all()       # every fault was transient
        codes = pd.Series([e["status"] for e in server.log]).value_counts()
        assert codes[429] > 0 and codes[500] > 0 and codes[200] == len(results)
        truncated = [r for r in results if r["truncated"]]
        assert truncated and all(r["status"] == "parse_failure" for r in truncated)
        usage = server.usage["judge_a"]
        assert sum(r["input_tokens"] for r in results) == usage["input_tokens"]
        assert sum(r["cost"] for r in results) == pytest.approx(
            (usage["input_tokens"] + 4 * usage["output_tokens"]) / 1e6)
        before = len(server.log)
        _, again = run_judge(server, tmp_path)                    # all cached: no request
        assert len(server.log) == before and all(r["cached"] for r in again)
        assert [r["value"] for r in again] == [r["value"] for r in results]


def test_runner_stops_at_max_cost_and_resumes_without_repeats(tmp_path):
    with JudgeServer(pairwise=default_pairwise_judges()) as server:
        with pytest.raises(Stopped, match="max_cost"):
            run_judge(server, tmp_path, budget=Budget(0.002), concurrency=2)
        first = len(server.log)
        assert 0 < first < 60
        _, results = run_judge(server, tmp_path)
        bodies = pd.Series([e["body"] for e in server.log])
        assert not bodies.duplicated().any() and len(bodies) == 60
        assert sum(not r["cached"] for r in results) == 60 - first


def test_runner_fails_fast_on_a_wrong_key(tmp_path, monkeypatch):
    from polyjudge.judges.runner import EndpointError
    monkeypatch.setenv("POLYJUDGE_TEST_KEY", "sk-wrong")
    with JudgeServer(pairwise=default_pairwise_judges(), api_key="sk-right") as server:
        endpoint = Endpoint("judge_a", server.base_url, "judge_a",
                            api_key_env="POLYJUDGE_TEST_KEY")
        calls = protocols.pairwise_calls(protocols_items(pairwise_items(2)), {}, "en", [],
                                         endpoint, prompt("pairwise_llmbar"))
        with pytest.raises(EndpointError, match="POLYJUDGE_TEST_KEY") as error:
            run_calls(calls, endpoint, CallCache(tmp_path / "c.jsonl"),
                      prompt("pairwise_llmbar").answer)
        assert "sk-wrong" not in str(error.value)
    monkeypatch.delenv("POLYJUDGE_TEST_KEY")
    with pytest.raises(ValueError, match="POLYJUDGE_TEST_KEY is not set"):
        endpoint.api_key()


def test_runner_stops_when_nothing_answers_at_the_endpoint(tmp_path):
    """No server at base_url: the shard stops naming the endpoint after its first calls fail,
    instead of retrying every call; nothing is cached."""
    import socket
    import time
    from polyjudge.judges import RetryPolicy
    from polyjudge.judges.runner import EndpointError
    with socket.socket() as probe:  # a free local port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    endpoint = Endpoint("ghost", f"http://127.0.0.1:{port}/v1", "m", max_concurrency=2)
    calls = protocols.pairwise_calls(protocols_items(pairwise_items(30)), {}, "en", [], endpoint,
                                     prompt("pairwise_llmbar"))
    cache = CallCache(tmp_path / "c.jsonl")
    start = time.monotonic()
    with pytest.raises(EndpointError, match=r"'ghost' cannot be reached at http://127.0.0.1:"):
        run_calls(calls, endpoint, cache, prompt("pairwise_llmbar").answer,
                  policy=RetryPolicy(2, 0.01, 0.02))
    assert time.monotonic() - start < 30
    assert not (tmp_path / "c.jsonl").exists() or not (tmp_path / "c.jsonl").read_text().strip()


KILLABLE = """
import sys
from judge_items import pairwise_items
from polyjudge.judges import (CallCache, Endpoint, RetryPolicy, Stopped, load_prompt, protocols,
                              run_calls)
base_url, cache, items = sys.argv[1:4]
pairwise_items(40).to_csv(items, index=False)
prompt = load_prompt(sys.argv[4])
endpoint = Endpoint("judge_a", base_url, "judge_a", max_concurrency=4)
calls = protocols.pairwise_calls(protocols.read_items(items, "pairwise"), {}, "en", [], endpoint,
                                 prompt)
try:
    run_calls(calls, endpoint, CallCache(cache), prompt.answer, policy=RetryPolicy(3, 0.01, 0.1))
except Stopped as stopped:
    print(stopped)
    sys.exit(3)
"""


def start_killable(tmp_path, server, script: str, requests: int):
    """Run ``script`` (a runner that can be killed) against ``server`` in a subprocess, once
    the server has seen ``requests`` requests; returns the process, its arguments and env."""
    import time
    (tmp_path / "killable.py").write_text(script)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests")])}
    args = [sys.executable, str(tmp_path / "killable.py"), server.base_url,
            str(tmp_path / "cache.jsonl"), str(tmp_path / "items.csv"),
            str(PROMPTS / "pairwise_llmbar.yaml")]
    process = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(server.log) < requests and time.monotonic() < deadline:
        time.sleep(0.005)
    return process, args, env


@pytest.mark.slow
def test_sigterm_lets_calls_in_flight_finish_and_a_restart_repeats_none(tmp_path):
    with JudgeServer(pairwise=default_pairwise_judges(), faults={"slow": 1.0},
                     slow_seconds=0.05) as server:
        first, args, env = start_killable(tmp_path, server, KILLABLE, requests=10)
        first.send_signal(signal.SIGTERM)
        out, _ = first.communicate(timeout=60)
        assert first.returncode == 3 and "SIGTERM" in out and "not made" in out
        answered = len(server.log)
        assert 10 <= answered < 80
        # every answered call, those in flight at the signal included, is in the cache
        assert len((tmp_path / "cache.jsonl").read_text().splitlines()) == answered
        again = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stderr[-2000:]
        bodies = pd.Series([e["body"] for e in server.log])
        assert len(bodies) == 80 and not bodies.duplicated().any()


def test_a_changed_parser_reparses_the_cache_without_calls(tmp_path):
    with JudgeServer(pairwise=default_pairwise_judges()) as server:
        calls, results = run_judge(server, tmp_path, n=5, structured=False)
        sent = len(server.log)
        strict = AnswerFormat.from_spec({"kind": "label", "pattern": r"^Output \((a)\)$",
                                         "labels": {"a": "first"}})
        endpoint = Endpoint("judge_a", server.base_url, "judge_a", max_concurrency=8,
                            timeout=5.0, price_input_per_million=1.0, price_output_per_million=4.0)
        again = run_calls(protocols.sendable(calls), endpoint, CallCache(tmp_path / "cache.jsonl"),
                          strict)
        assert len(server.log) == sent                             # nobody called
        for old, new in zip(results, again):
            assert new["raw"] == old["raw"] and new["cached"]
            assert (new["value"], new["status"]) == (
                ("first", "ok") if old["raw"] == "Output (a)" else (None, "parse_failure"))


def test_sigterm_cuts_a_retry_wait_short(tmp_path):
    import time
    script = KILLABLE.replace("RetryPolicy(3, 0.01, 0.1)", "RetryPolicy(3, 0.01, 60.0)")
    with JudgeServer(pairwise=default_pairwise_judges(), faults={"429": 1.0},
                     retry_after=30) as server:
        process, _, _ = start_killable(tmp_path, server, script, requests=4)
        signalled = time.monotonic()
        process.send_signal(signal.SIGTERM)
        out, _ = process.communicate(timeout=60)
        assert time.monotonic() - signalled < 10          # not the 30 s Retry-After
        assert process.returncode == 3 and "80 of 80 calls not made" in out
        assert not (tmp_path / "cache.jsonl").exists()    # nothing failed was cached


def test_an_empty_shard_writes_an_empty_calls_table(tmp_path):
    frame = protocols_items(pairwise_items(3))
    assert len(protocols.shard_items(frame, 5, 4)) == 0          # more shards than items
    table = protocols.calls_table([], {})
    table.to_parquet(tmp_path / "empty.parquet")
    assert len(pd.read_parquet(tmp_path / "empty.parquet")) == 0 and "status" in table


def test_plan_costs_are_rounded_for_reading_and_totals_kept_apart(tmp_path):
    """plan.csv is read by people and by programs: costs are written to 4 significant digits
    (0.9093, not 0.9093000000000001), never coarser than cents, and the totals go to their own
    one-row table, so no `total` row is mixed into the data rows."""
    judge = Endpoint("judge", "http://x/v1", "m", price_input_per_million=0.15,
                     price_output_per_million=0.6)
    cost = judge.cost(29_940, 2_994)
    assert repr(cost) == "0.006287399999999999" and readable_cost(cost) == 0.006287
    assert readable_cost(0.9093000000000001) == 0.9093
    assert readable_cost(0.000123456) == 0.0001235 and readable_cost(1953.1234) == 1953.12
    assert readable_cost(0.0) == 0.0 and readable_cost(12.3456) == 12.35
    frame = pd.DataFrame({"endpoint": ["judge"], "cost_usd": [0.9093000000000001]})
    frame.assign(cost_usd=frame["cost_usd"].map(readable_cost)).to_csv(tmp_path / "p.csv",
                                                                       index=False)
    assert (tmp_path / "p.csv").read_text().splitlines()[1] == "judge,0.9093"
