"""Calls sent as provider batch jobs (polyjudge/judges/batch.py) against the local batch server
(tests/judge_server.py): answers equal those made one by one, at batch prices; a rerun calls no
one; a killed (SIGKILL) or stopped (SIGTERM) run re-attaches and each request runs once; an
expired batch keeps what it completed and only the rest is sent again (in a batch or one by one);
a transient error (500) goes into the next batch of the run, within max_attempts counted across
batches (and by a run that re-attaches after a kill while they ran), while a permanent one (400)
is `failed` and named (log, status.csv); a malformed output line names the batch and line;
max_cost is reserved before a batch is created. Plus the journal, the progress line and the
sorting of a batch's results on their own."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from judge_items import pointwise_items
from judge_server import JudgeServer

from polyjudge.judges import (Budget, CallCache, Endpoint, RetryPolicy, Stopped, load_prompt,
                              protocols, run_calls)
from polyjudge.judges.batch import Journal, journal_path
from polyjudge.judges.batch_lines import (BatchError, line_error, progress_line,
                                          read_result_lines, request_lines, sort_requests)
from polyjudge.judges.ledger import Ledger
from polyjudge.judges.parse import FAILED
from polyjudge.judges.runner import transient

REPO = Path(__file__).resolve().parents[1]
PROMPT = REPO / "config" / "prompts" / "pointwise_rubric.yaml"
PRICE_IN, PRICE_OUT = 2.0, 8.0
FAST = {"batch": True, "batch_poll_interval": 0.02, "batch_poll_max": 0.05,
        "price_input_per_million": PRICE_IN, "price_output_per_million": PRICE_OUT}


def endpoint(server, **settings):
    return Endpoint.from_config("scorer_x", {"base_url": server.base_url, "model": "scorer_x",
                                             **FAST, **settings})


def calls_for(endpoint, n_items=6):
    items = pointwise_items(n_items, ["en", "zh"]).astype({"item_index": str})
    return protocols.sendable(protocols.pointwise_calls(items, endpoint, load_prompt(PROMPT)))


def run(server, tmp_path, n_items=6, budget=None, name="cache.jsonl", **settings):
    judge = endpoint(server, **settings)
    return run_calls(calls_for(judge, n_items), judge, CallCache(tmp_path / name),
                     load_prompt(PROMPT).answer, policy=RetryPolicy(3, 0.01, 0.05),
                     budget=budget, progress_interval=0.05)


def executed(server):
    """custom_id -> how many times the server ran it in a batch."""
    return pd.Series([e["custom_id"] for e in server.batch_log]).value_counts()


def test_batches_answer_as_calls_one_by_one_do_at_batch_prices_and_a_rerun_calls_no_one(
        tmp_path):
    with JudgeServer(pointwise={"scorer_x": {"zh": -1}}, batch_request_delay=0.002) as server:
        results = run(server, tmp_path)
        assert server.batch_created == 1 and len(server.batch_log) == len(results) == 24
        usage = server.usage["scorer_x"]
        batch_cost = 0.5 * (usage["input_tokens"] * PRICE_IN
                            + usage["output_tokens"] * PRICE_OUT) / 1e6
        assert sum(r["cost"] for r in results) == pytest.approx(batch_cost, rel=1e-12)
        batch_id = next(iter(server.batches))
        assert {r["batch"] for r in results} == {batch_id} and not any(
            r["cached"] for r in results)
        # the same calls one by one: the same replies, at list price
        one_by_one = run(server, tmp_path, name="sync.jsonl", batch=False)
        assert [r["raw"] for r in one_by_one] == [r["raw"] for r in results]
        assert [r["value"] for r in one_by_one] == [r["value"] for r in results]
        assert sum(r["cost"] for r in one_by_one) == pytest.approx(2 * batch_cost, rel=1e-12)
        # a rerun: everything from the cache, no batch, no request
        log = len(server.log)
        again = run(server, tmp_path)
        assert all(r["cached"] for r in again) and server.batch_created == 1
        assert len(server.log) == log
        # batch prices given instead of the factor
        explicit = Endpoint.from_config("e", {"base_url": "x", "model": "m", **FAST,
                                              "batch_price_input_per_million": 1.5,
                                              "batch_price_output_per_million": 3.0})
        assert explicit.cost(1e6, 1e6, batch=True) == 4.5 and explicit.cost(1e6, 1e6) == 10.0


def test_request_errors_are_failed_and_sent_again_by_the_next_run(tmp_path):
    with JudgeServer(pointwise={"scorer_x": {}}, batch_errors=0.3) as server:
        results = run(server, tmp_path)
        failed = [r for r in results if r["status"] == FAILED]
        assert 0 < len(failed) < len(results)
        assert all("planted_error" in r["error"] and next(iter(server.batches)) in r["error"]
                   for r in failed)
        cached = CallCache(tmp_path / "cache.jsonl")
        assert len(cached) == len(results) - len(failed)  # failures are not cached
        server.batch_errors = 0.0
        again = run(server, tmp_path)
        assert all(r["status"] != FAILED for r in again) and server.batch_created == 2
        second = [e for e in server.batch_log if e["batch"] == list(server.batches)[1]]
        assert sorted(e["custom_id"] for e in second) == sorted(r["key"] for r in failed)


def test_transient_errors_go_into_the_next_batch_and_permanent_ones_are_named(tmp_path, caplog):
    with JudgeServer(pointwise={"scorer_x": {}}, batch_errors=0.1,
                     batch_transient=0.2) as server, caplog.at_level("INFO", "polyjudge.judges"):
        results = run(server, tmp_path)
        assert server.batch_created == 2
        first, second = list(server.batches)
        ran = {e["custom_id"]: [] for e in server.batch_log}
        for e in server.batch_log:
            ran[e["custom_id"]].append((e["batch"], e["status"]))
        transient = {k for k, runs in ran.items() if runs == [(first, 500), (second, 200)]}
        permanent = {k for k, runs in ran.items() if runs == [(first, 400)]}
        once = {k for k, runs in ran.items() if runs == [(first, 200)]}
        assert transient and permanent and len(transient | permanent | once) == 24
        by_key = {r["key"]: r for r in results}
        assert {k for k, r in by_key.items() if r["status"] == FAILED} == permanent
        assert all(by_key[k]["batch"] == second and by_key[k]["attempts"] == 2
                   for k in transient)
        assert all(by_key[k]["error"] == f"batch {first}: 400 planted_error planted request "
                   "error" and by_key[k]["attempts"] == 1 for k in permanent)
        # paid once: the cache holds every reply, the cost is the server's usage at batch prices
        usage = server.usage["scorer_x"]
        assert usage["requests"] == len(CallCache(tmp_path / "cache.jsonl")) == 24 - len(
            permanent)
        assert sum(r.get("cost", 0.0) for r in results) == pytest.approx(
            0.5 * (usage["input_tokens"] * PRICE_IN + usage["output_tokens"] * PRICE_OUT) / 1e6)
    failed = [r.getMessage() for r in caplog.records if "failed, not sent again" in r.getMessage()]
    assert len(failed) == len(permanent) and all("400 planted_error" in m and "item " in m
                                                 for m in failed)
    assert f"{len(transient)} sent again ({len(transient)} x 500 The server had" in caplog.text


def test_with_sync_leftovers_transient_errors_are_sent_one_by_one(tmp_path):
    with JudgeServer(pointwise={"scorer_x": {}}, batch_transient=0.2) as server:
        results = run(server, tmp_path, batch_leftovers="sync")
        assert all(r["status"] == "ok" for r in results) and server.batch_created == 1
        retried = {e["custom_id"] for e in server.batch_log if e["status"] == 500}
        alone = [e for e in server.log if "batch" not in e]
        assert retried and len(alone) == len(retried) and server.usage["scorer_x"][
            "requests"] == 24
        assert all(r.get("batch") is None and r["attempts"] == 1
                   for r in results if r["key"] in retried)


def test_a_reattaching_run_counts_the_tries_of_the_batch_it_finds(tmp_path):
    # a run killed while the batch of its retries ran: the journal says each request had gone
    # into one batch before, so with max_attempts 2 a 500 in this one is the last try
    import openai
    with JudgeServer(pointwise={"scorer_x": {}}, batch_transient=0.2) as server:
        judge = endpoint(server)
        calls = calls_for(judge)
        client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        uploaded = client.files.create(file=("x.jsonl", request_lines(calls, judge)),
                                       purpose="batch")
        batch = client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                                      completion_window="24h").id
        Journal(tmp_path / "batches-cache.jsonl").write(
            {"local": "retry", "keys": [c.key for c in calls], "file": uploaded.id,
             "batch": batch, "ticket": None, "estimate": 0.0,
             "tries": {c.key: 1 for c in calls}})
        results = run_calls(calls, judge, CallCache(tmp_path / "cache.jsonl"),
                            load_prompt(PROMPT).answer, policy=RetryPolicy(2, 0.01, 0.05),
                            progress_interval=0.05)
        assert server.batch_created == 1
        failed = [r for r in results if r["status"] == FAILED]
        assert len(failed) == sum(e["status"] == 500 for e in server.batch_log) > 0
        assert all(r["error"].endswith("(not completed in 2 batches)") and r["attempts"] == 2
                   for r in failed)


def test_sorting_a_batchs_results_without_a_server():
    def reply(key, status=200):
        body = ({"choices": []} if status == 200 else
                {"error": {"message": "no", "code": "bad_request" if status == 400 else None}})
        return {"custom_id": key, "response": {"status_code": status, "body": body},
                "error": None}
    output = [reply("ok"), reply("twice"), reply("500 in output", 500), reply("other batch")]
    errors = [reply("twice", 500), reply("400", 400), reply("429", 429), reply("500 last", 503),
              {"custom_id": "expired", "response": None,
               "error": {"code": "batch_expired", "message": "not run"}},
              {"custom_id": "coded", "response": None, "error": {"code": "502", "message": ""}}]
    keys = ["ok", "twice", "500 in output", "400", "429", "500 last", "expired", "coded",
            "absent"]
    found = sort_requests(keys, output, errors, "b1", {"500 last": 2, "400": 2}, 3)
    assert list(found.replies) == ["ok", "twice"]  # a reply is kept, whatever else is said
    assert found.again == {"500 in output": "batch b1: 500 no", "429": "batch b1: 429 no",
                           "expired": "batch b1: batch_expired not run",
                           "coded": "batch b1: 502",
                           "absent": "batch b1: no line in its output or error file"}
    assert found.failed == {"400": "batch b1: 400 bad_request no",
                            "500 last": "batch b1: 503 no (not completed in 3 batches)"}
    # every request is in exactly one of the three
    assert sorted([*found.replies, *found.again, *found.failed]) == sorted(keys)
    # the same notion of transient as calls made one by one
    assert [s for s in (200, 400, 401, 404, 408, 409, 422, 429, 500, 502, 503, 504)
            if transient(s)] == [408, 409, 429, 500, 502, 503, 504]
    assert not transient(None)


def test_status_table_names_the_errors_of_failed_calls():
    table = pd.DataFrame({
        "stage": "judge_pointwise", "endpoint": "x", "language": ["en", "en", "en", "zh", "zh"],
        "status": ["failed", "ok", "failed", "failed", "ok"], "truncated": False,
        "error": ["batch b1: 400 bad_request no", None, "batch b2: 400 bad_request no",
                  "RateLimitError 429", None]})
    status = protocols.status_table(table).set_index("condition")
    assert status["n_failed"].to_dict() == {"en": 2, "zh": 1}
    assert status["failed_errors"].to_dict() == {"en": "2 x 400 bad_request no",
                                                 "zh": "1 x RateLimitError 429"}
    assert protocols.failed_errors(pd.Series(["b", "a", "b", "batch x: a"])) == "2 x a; 2 x b"
    assert protocols.failed_errors(pd.Series([], dtype=object)) == ""


@pytest.mark.parametrize("leftovers", ["batch", "sync"])
def test_an_expired_batch_keeps_what_it_completed_and_only_the_rest_is_sent_again(
        tmp_path, leftovers):
    with JudgeServer(pointwise={"scorer_x": {}}, batch_expire=0.5,
                     batch_expire_batches=1) as server:
        results = run(server, tmp_path, batch_leftovers=leftovers)
        assert all(r["status"] == "ok" for r in results) and len(results) == 24
        first = list(server.batches)[0]
        assert server.batches[first]["status"] == "expired"
        done_first = {e["custom_id"] for e in server.batch_log if e["batch"] == first}
        assert len(done_first) == 12
        if leftovers == "batch":  # the other 12 in a second batch, nothing twice
            assert server.batch_created == 2 and executed(server).eq(1).all()
            assert len(executed(server)) == 24
        else:  # the other 12 one by one
            assert server.batch_created == 1 and len(server.batch_log) == 12
            assert server.usage["scorer_x"]["requests"] == 24
        by_key = {r["key"]: r for r in results}
        assert all(by_key[k]["batch"] == first for k in done_first)


def test_a_malformed_output_line_names_the_batch_and_the_line(tmp_path):
    with JudgeServer(pointwise={"scorer_x": {}}, batch_malformed=True) as server:
        with pytest.raises(BatchError, match=r"batch batch_\w+: output file line 2 is not a "
                                             r"result"):
            run(server, tmp_path)
    with pytest.raises(BatchError, match="batch b1: error file line 3"):
        read_result_lines('{"custom_id": "a", "error": null}\n\n{"x": 1}\n', "b1", "error")


def test_max_cost_is_reserved_before_a_batch_is_created(tmp_path):
    with JudgeServer(pointwise={"scorer_x": {}}) as server:
        judge = endpoint(server, batch_max_requests=10)
        estimate = lambda call: 0.001  # noqa: E731 - each call's estimate at batch prices
        # room for one batch of 10 (0.01), not two: the second is never created
        ledger = Ledger(tmp_path / "cache", "c", 0.015)
        budget = Budget(0.015, estimate=estimate, ledger=ledger)
        with pytest.raises(Stopped, match="max_cost 0.015 reached .* 14 of 24 calls not made"):
            run_calls(calls_for(judge), judge, CallCache(tmp_path / "cache.jsonl"),
                      load_prompt(PROMPT).answer, budget=budget, progress_interval=0.05)
        assert server.batch_created == 1 and len(server.batch_log) == 10
        reserve = [json.loads(line) for line in ledger.path.read_text().splitlines()
                   if '"reserve"' in line]
        assert [(r["cost"], r["lasting"]) for r in reserve] == [(pytest.approx(0.01), True)]
        spent, reserved = ledger.view()
        assert reserved == 0 and spent == pytest.approx(sum(
            r["cost"] for r in CallCache(tmp_path / "cache.jsonl").records.values()))


KILLABLE = """
import sys
from judge_items import pointwise_items
from polyjudge.judges import CallCache, Endpoint, Stopped, load_prompt, protocols, run_calls
base_url, cache, prompt_path = sys.argv[1:4]
endpoint = Endpoint.from_config("scorer_x", {"base_url": base_url, "model": "scorer_x",
                                             "batch": True, "batch_poll_interval": 0.02,
                                             "batch_poll_max": 0.05})
prompt = load_prompt(prompt_path)
items = pointwise_items(6, ["en", "zh"]).astype({"item_index": str})
calls = protocols.sendable(protocols.pointwise_calls(items, endpoint, prompt))
try:
    run_calls(calls, endpoint, CallCache(cache), prompt.answer, progress_interval=0.05)
except Stopped as stopped:
    print(stopped)
    sys.exit(3)
"""


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_or_stopped_run_reattaches_and_each_request_runs_once(tmp_path, sig):
    with JudgeServer(pointwise={"scorer_x": {}}, batch_delay=1.0,
                     batch_request_delay=0.01) as server:
        (tmp_path / "killable.py").write_text(KILLABLE)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests")])}
        args = [sys.executable, str(tmp_path / "killable.py"), server.base_url,
                str(tmp_path / "cache.jsonl"), str(PROMPT)]
        first = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not server.batch_created and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(0.1)  # polling now
        first.send_signal(sig)
        out, _ = first.communicate(timeout=60)
        if sig == signal.SIGTERM:  # stopped, naming the batch left running
            assert first.returncode == 3 and "SIGTERM" in out and "re-attaches" in out
        batch = next(iter(server.batches))
        assert server.batches[batch]["status"] != "cancelled"
        journal = Journal(tmp_path / "batches-cache.jsonl").open_entries()
        assert [e["batch"] for e in journal] == [batch] and len(journal[0]["keys"]) == 24
        again = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stderr[-2000:]
        assert server.batch_created == 1 and len(executed(server)) == 24
        assert executed(server).eq(1).all()
        assert len(CallCache(tmp_path / "cache.jsonl")) == 24
        assert not Journal(tmp_path / "batches-cache.jsonl").open_entries()


@pytest.mark.slow
def test_a_run_killed_while_its_retries_run_reattaches_to_them(tmp_path):
    # every batch waits 0.5 s before it runs, so the kill lands while the batch of the first
    # batch's 500s is at the provider; the next run takes it in and sends nothing again
    with JudgeServer(pointwise={"scorer_x": {}}, batch_delay=0.5, batch_transient=0.2) as server:
        (tmp_path / "killable.py").write_text(KILLABLE)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests")])}
        args = [sys.executable, str(tmp_path / "killable.py"), server.base_url,
                str(tmp_path / "cache.jsonl"), str(PROMPT)]
        first = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while server.batch_created < 2 and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(0.1)
        first.kill()
        first.wait(timeout=60)
        retries = list(server.batches)[1]
        assert server.batches[retries]["status"] in ("validating", "in_progress")
        [entry] = Journal(tmp_path / "batches-cache.jsonl").open_entries()
        assert entry["batch"] == retries and entry["tries"] == dict.fromkeys(entry["keys"], 1)
        again = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stderr[-2000:]
        assert server.batch_created == 2 and len(CallCache(tmp_path / "cache.jsonl")) == 24
        answered = [e["custom_id"] for e in server.batch_log if e["status"] == 200]
        assert sorted(answered) == sorted(set(answered)) and len(answered) == 24
        assert len(entry["keys"]) == sum(e["status"] == 500 for e in server.batch_log)
        assert not Journal(tmp_path / "batches-cache.jsonl").open_entries()


def test_a_batch_created_before_its_id_was_written_is_found_by_its_metadata(tmp_path):
    import openai
    with JudgeServer(pointwise={"scorer_x": {}}) as server:
        judge = endpoint(server)
        calls = calls_for(judge)
        client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        uploaded = client.files.create(file=("x.jsonl", request_lines(calls, judge)),
                                       purpose="batch")
        client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                              completion_window="24h", metadata={"polyjudge_journal": "kill"})
        # the journal as a SIGKILL between create and the id's line leaves it
        Journal(tmp_path / "batches-cache.jsonl").write(
            {"local": "kill", "keys": [c.key for c in calls], "file": uploaded.id,
             "ticket": None, "estimate": 0.0})
        results = run(server, tmp_path)
        assert server.batch_created == 1 and executed(server).eq(1).all()
        assert all(r["status"] == "ok" and not r["cached"] for r in results)


def test_journal_progress_line_and_error_lines():
    cache = CallCache(Path("/nonexistent/c/shard3.jsonl"))
    assert journal_path(cache).name == "batches-shard3.jsonl"
    assert not journal_path(cache).match("shard*.jsonl")  # the cache's peers never read it
    state = {"id": "batch_1", "status": "in_progress",
             "request_counts": {"total": 400, "completed": 120, "failed": 3}}
    assert progress_line("pw round 2 j batch", [state], 312.4) == (
        "pw round 2 j batch: batch batch_1 in_progress, 120/400 requests done (3 failed); "
        "waiting 5 min 12 s")
    assert line_error({"custom_id": "a", "response": None,
                       "error": {"code": "batch_expired", "message": "late"}}) == (
        "batch_expired", "late")
    assert line_error({"custom_id": "a", "response": {"status_code": 400, "body": {
        "error": {"message": "bad", "code": "planted_error"}}}, "error": None}) == (
        "planted_error", "bad")


def test_journal_merges_events_and_skips_a_torn_line(tmp_path):
    journal = Journal(tmp_path / "batches-shard0.jsonl")
    journal.write({"local": "a", "keys": ["k1"], "file": "file-1"})
    journal.write({"local": "b", "keys": ["k2"], "file": "file-2"})
    journal.write({"local": "a", "batch": "batch_a"})
    journal.write({"local": "b", "batch": "batch_b"})
    journal.write({"local": "b", "done": "completed"})
    with open(journal.path, "a") as handle:
        handle.write('{"local": "a", "do')  # a kill mid-line
    assert journal.open_entries() == [{"local": "a", "keys": ["k1"], "file": "file-1",
                                       "batch": "batch_a"}]
    assert json.loads(journal.path.read_text().splitlines()[0])["local"] == "a"


def test_a_journal_batch_the_provider_does_not_know_is_sent_again(tmp_path):
    with JudgeServer(pointwise={"scorer_x": {}}) as server:
        judge = endpoint(server)
        Journal(tmp_path / "batches-cache.jsonl").write(
            {"local": "old", "keys": [c.key for c in calls_for(judge)], "file": "file-x",
             "batch": "batch_from_another_account", "ticket": None, "estimate": 0.0})
        results = run(server, tmp_path)
        assert all(r["status"] == "ok" for r in results) and server.batch_created == 1
        entries = Journal(tmp_path / "batches-cache.jsonl").entries()
        assert entries["old"]["done"] == "not found" and not any(
            "done" not in e for e in entries.values())
