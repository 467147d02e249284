"""Collecting to a precision (`collect.stop`) and the shared cost cap, against the local server
(tests/judge_server.py, planted scorers): a stopped collection's stopping.csv and cache agree
call for call with the server; a tighter target continues; SIGTERM mid-round repeats no paid
call; an unmeetable target stops with the widths reached; the analyses run on the items
collected; 8 shards in parallel stay within max_cost plus the calls in flight (with and without
stop); bad `stop` settings fail at start-up naming the key. Plus the ledger on its own.
Collections that several tests read, or that do not depend on each other, are made once per
module and side by side (fixtures `retiring`, `capped`)."""
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import assert_strict_json
from judge_items import pointwise_items
from judge_server import JudgeServer
from test_judges_workflow import PRICES, REPO, SCORERS, SECRET, collection_config, \
    no_repeated_answers, side_by_side, snakemake

from polyjudge.judges import Endpoint, load_prompt, plan_table, protocols
from polyjudge.judges.cache import read_records, spent
from polyjudge.judges.ledger import Ledger
from polyjudge.judges.rounds import check_stop

CALLS_PER_ITEM = 3 * 2 * len(SCORERS)  # languages x sides x judges


def stop_config(tmp_path, base_url, stop, n_items=40, shards=2, **kwargs):
    config = collection_config(tmp_path, base_url, n_pointwise=n_items, shards=shards, **kwargs)
    config["panels"]["pw"]["collect"]["stop"] = stop
    return config


def answered(server):
    return [e for e in server.log if e["status"] == 200]


def cache_records(tmp_path, panel="pw"):
    return [r for p in sorted((tmp_path / "cache" / panel).glob("*/*/shard*.jsonl"))
            for r in read_records(p)]


def job_pids(name):
    """Processes running a rule script whose command line contains ``name``."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and name in (entry / "cmdline").read_text():
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


@pytest.mark.slow
def test_stopped_collection_continues_resumes_and_feeds_the_analyses(tmp_path):
    # no score_range: the sequence's range is derived from the 1-5 rubric ([-4, 4] margins)
    stop = {"beta_halfwidth": 1.0, "round_items": 8, "min_items": 8}
    targets = ["results/pw/collect/stopping.csv", "results/pw/collect/usage.csv",
               "results/pw/cbc/beta.csv"]
    with JudgeServer(pointwise=SCORERS, faults={"429": 0.03, "500": 0.03},
                     unparseable={"scorer_y": 0.02}, api_key=SECRET, latency=0.02) as server:
        config = stop_config(tmp_path, server.base_url, stop)
        del config["panels"]["pw"]["score_range"]
        snakemake(tmp_path, config, *targets)
        rounds = pd.read_csv(tmp_path / "results/pw/collect/stopping.csv")
        last = rounds.iloc[-1]
        assert last["stop"] and last["reason"] == "beta_halfwidth 1.0 reached"
        assert rounds["stop"].sum() == 1 and last["max_beta_halfwidth"] <= 1.0
        # no interval before 20 informative items: the first round's widths are infinite
        assert rounds.loc[0, "max_beta_halfwidth"] == float("inf")
        assert "with no interval yet" in rounds.loc[0, "reason"]
        assert assert_strict_json(tmp_path / "results") >= 1
        assert list(rounds["items"]) == [8 * (r + 1) for r in range(len(rounds))]
        assert last["items"] < 40
        # call for call: every round's calls are its items' whole blocks, each answered once
        assert list(rounds["calls"]) == list(rounds["items"] * CALLS_PER_ITEM)
        made = answered(server)
        records = cache_records(tmp_path)
        assert len(made) == len(records) == last["calls"] == last["calls_made_this_run"]
        cost = sum((u["input_tokens"] * PRICES[m][0] + u["output_tokens"] * PRICES[m][1]) / 1e6
                   for m, u in server.usage.items())
        assert last["cost_usd"] == pytest.approx(cost) == pytest.approx(spent(
            tmp_path / "cache", "pw"))
        # the analyses ran on the items collected; usage says the panel was stopped adaptively
        tensor = pd.read_parquet(tmp_path / "results/pw/tensor.parquet")
        assert tensor["task"].nunique() == last["items"]
        assert len(pd.read_csv(tmp_path / "results/pw/cbc/beta.csv")) == 3 * 2
        usage = pd.read_csv(tmp_path / "results/pw/collect/usage.csv")
        design = f"stopped adaptively after round {len(rounds)}"
        assert usage["design"].str.startswith(design).all()

        # a tighter target continues; SIGTERM in the middle of a round loses no paid call
        config["panels"]["pw"]["collect"]["stop"]["beta_halfwidth"] = 0.3
        path = tmp_path / "collect.yaml"
        path.write_text(yaml.safe_dump(config))
        env = {**os.environ, "PYTHONPATH": str(REPO), "POLYJUDGE_TEST_KEY": SECRET}
        run = subprocess.Popen([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"),
                                "--cores", "2", targets[0], "--configfile", str(path)],
                               cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        before = len(made)
        server.latency = 1.0  # a round's calls stay in flight a second: the signal lands mid-round
        deadline = time.monotonic() + 120
        while len(answered(server)) < before + 30 and time.monotonic() < deadline:
            time.sleep(0.05)
        for pid in job_pids(str(tmp_path / ".snakemake")):
            if "collect_rounds" in Path(f"/proc/{pid}/cmdline").read_text():
                os.kill(pid, signal.SIGTERM)
        assert run.wait(timeout=120) != 0
        log = (tmp_path / "results/pw/logs/judge_pointwise_rounds.log").read_text()
        assert "SIGTERM" in log and "calls not made" in log
        interrupted = len(answered(server))
        assert before < interrupted < 40 * CALLS_PER_ITEM
        server.latency = 0.02
        snakemake(tmp_path, config, targets[0])
        assert no_repeated_answers(server)
        rounds = pd.read_csv(tmp_path / "results/pw/collect/stopping.csv")
        last = rounds.iloc[-1]
        # 0.3 is out of reach with 40 items: stopped at the item table, widths reached named
        assert not last["stop"] and last["reason"] == "target not met: item table exhausted"
        assert last["items"] == 40 and last["max_beta_halfwidth"] > 0.3
        assert len(answered(server)) == len(cache_records(tmp_path)) == last["calls"]
        assert last["calls_made_this_run"] == last["calls"] - interrupted
        log = (tmp_path / "results/pw/logs/judge_pointwise_rounds.log").read_text()
        assert "was not met within the item table" in log and "widest beta half-width" in log
        # a looser target calls nothing: it stops where the first run stopped, from the cache
        everything = len(answered(server))
        config["panels"]["pw"]["collect"]["stop"]["beta_halfwidth"] = 1.0
        snakemake(tmp_path, config, targets[0])
        assert len(answered(server)) == everything
        again = pd.read_csv(tmp_path / "results/pw/collect/stopping.csv")
        assert again.iloc[-1]["stop"] and again["calls_made_this_run"].eq(0).all()
        assert list(again["items"]) == list(rounds["items"][:len(again)])


# scorer_z's margins are far below the others' (its chosen and rejected both near 5), so its
# pairs settle within a few rounds; scorer_x vs scorer_y is too close for 48 items
RETIRING = {**SCORERS, "scorer_z": {"en": 2, "zh": 2, "es": 2}}
BATCH = {"batch": True, "batch_poll_interval": 0.02, "batch_poll_max": 0.05}
STOPPING, USAGE = "results/pw/collect/stopping.csv", "results/pw/collect/usage.csv"


def retire_config(folder, base_url, shards, batch):
    stop = {"decisions": ["calibrated"], "epsilon": 0.02, "round_items": 8, "min_items": 8,
            "retire": True}
    config = stop_config(folder, base_url, stop, n_items=48, shards=shards)
    config["endpoints"]["scorer_z"] = {**config["endpoints"]["scorer_y"], "model": "scorer_z"}
    for endpoint in config["endpoints"].values():
        endpoint.update(BATCH if batch else {})
    config["panels"]["pw"]["collect"]["judges"] = list(RETIRING)
    config["panels"]["pw"]["backbones"] = list(RETIRING)
    return config


@pytest.fixture(scope="module")
def retiring(tmp_path_factory):
    """The retirement set-up collected one by one (1 shard) and in batch jobs (2 shards), side
    by side with a server each: batch -> (stopping.csv, usage.csv, server). The retire test
    reads the first, the batch test compares the two."""
    folders = {batch: tmp_path_factory.mktemp("batch" if batch else "sync")
               for batch in (False, True)}
    with JudgeServer(pointwise=RETIRING, api_key=SECRET) as sync, \
            JudgeServer(pointwise=RETIRING, api_key=SECRET) as batched:
        servers = {False: sync, True: batched}
        side_by_side(*[(folders[batch], retire_config(folders[batch], servers[batch].base_url,
                                                      2 if batch else 1, batch), STOPPING, USAGE)
                       for batch in (False, True)])
    return {batch: (pd.read_csv(folders[batch] / STOPPING), pd.read_csv(folders[batch] / USAGE),
                    servers[batch]) for batch in (False, True)}


@pytest.mark.slow
def test_retire_stops_calling_a_judge_whose_pairs_are_settled(retiring):
    rounds, _, server = retiring[False]
    called = pd.Series([e["model"] for e in answered(server)]).value_counts()
    with_z = rounds["active_judges"].str.contains("scorer_z")
    assert with_z.iloc[0] and not with_z.iloc[-1]           # called first, then retired
    assert list(with_z) == sorted(with_z, reverse=True)     # never called again
    z_items = int(rounds.loc[with_z, "items"].max())
    assert called["scorer_z"] == z_items * 3 * 2 < called["scorer_x"] == 48 * 3 * 2
    assert not rounds.iloc[-1]["stop"] and "scorer_x vs scorer_y" in rounds.iloc[-1]["undecided"]


@pytest.mark.slow
def test_batch_rounds_decide_as_rounds_one_by_one_do_at_half_the_cost(retiring):
    # the retirement set-up in batch jobs, with 2 shards: one batch per judge per round, the same
    # rounds, stops and retirements as calls one by one (in 1 shard: nor do the shards change
    # them), usage at batch prices
    (sync, sync_usage, _), (rounds, usage, server) = retiring[False], retiring[True]
    decided = ["round", "items", "calls", "stop", "reason", "undecided_pairs", "active_judges"]
    pd.testing.assert_frame_equal(rounds[decided], sync[decided])
    assert rounds["cost_usd"].to_numpy() == pytest.approx(sync["cost_usd"].to_numpy() / 2)
    # one batch per active judge per round, each with the round's whole block
    per_round = rounds["active_judges"].str.split("; ").map(len)
    assert server.batch_created == per_round.sum()
    assert sum(u["requests"] for u in server.usage.values()) == len(server.batch_log)
    sizes = sorted(pd.Series([e["batch"] for e in server.batch_log]).value_counts())
    assert sizes == sorted([8 * 3 * 2] * per_round.sum())
    # scorer_z retired: fewer requests than the full design, each request run once
    assert len(server.batch_log) == rounds.iloc[-1]["calls"] < 48 * 3 * 2 * 3
    assert pd.Series([e["custom_id"] for e in server.batch_log]).is_unique
    total = usage[usage["endpoint"] == "total"]["cost_usd"].iloc[0]
    expected = sum((u["input_tokens"] * PRICES.get(m, PRICES["scorer_y"])[0]
                    + u["output_tokens"] * PRICES.get(m, PRICES["scorer_y"])[1]) / 2e6
                   for m, u in server.usage.items())
    assert total == pytest.approx(expected) == pytest.approx(
        sync_usage[sync_usage["endpoint"] == "total"]["cost_usd"].iloc[0] / 2)


def design_cost(n_items, judge):
    """The plan's estimate of one judge's full design (every item, language and side)."""
    p_in, p_out = PRICES[judge]
    endpoints = {judge: Endpoint.from_config(judge, {"base_url": "http://x", "model": judge,
                                                     "price_input_per_million": p_in,
                                                     "price_output_per_million": p_out})}
    prompt = load_prompt(REPO / "config/prompts/pointwise_rubric.yaml",
                         protocols.PROMPT_FIELDS["pointwise"])
    items = pointwise_items(n_items, ["en", "zh", "es"]).astype({"item_index": str})
    calls = [c for e in endpoints.values() for c in protocols.pointwise_calls(items, e, prompt)]
    return float(plan_table(calls, endpoints)["cost_usd"].iloc[-1])


N_CAPPED, CONCURRENCY, CAPPED_JUDGE = 100, 2, "scorer_x"


def capped_config(folder, base_url, cap, batch):
    config = collection_config(folder, base_url, n_pointwise=N_CAPPED, shards=8, max_cost=cap)
    plain = config["panels"]["pw"]
    plain["collect"]["judges"] = plain["backbones"] = [CAPPED_JUDGE]
    config["panels"]["pws"] = {**plain, "collect": {
        **plain["collect"], "stop": {"beta_halfwidth": 0.01, "round_items": N_CAPPED}}}
    for endpoint in config["endpoints"].values():
        endpoint["max_concurrency"] = CONCURRENCY
        if batch:
            endpoint.update(BATCH, batch_max_requests=CONCURRENCY)
    return config


@pytest.fixture(scope="module")
def capped(tmp_path_factory):
    """The 8-shard collections at a cap, one by one and in batch jobs, side by side with a
    server each: batch -> (folder, snakemake's result, server, cap)."""
    # in batch jobs the cap buys twice the calls; batches of 2 are what is in flight per shard
    cap = design_cost(N_CAPPED, CAPPED_JUDGE) / 10
    folders = {batch: tmp_path_factory.mktemp("batch" if batch else "one_by_one")
               for batch in (False, True)}
    with JudgeServer(pointwise=SCORERS, api_key=SECRET, latency=0.03) as one_by_one, \
            JudgeServer(pointwise=SCORERS, api_key=SECRET, latency=0.03) as batched:
        servers = {False: one_by_one, True: batched}
        results = side_by_side(*[
            (folders[batch], capped_config(folders[batch], servers[batch].base_url, cap, batch),
             "--cores", "8", "--keep-going", USAGE, "results/pws/collect/stopping.csv")
            for batch in (False, True)], check=False)
    return {batch: (folders[batch], result, servers[batch], cap)
            for batch, result in zip((False, True), results)}


@pytest.mark.slow
@pytest.mark.parametrize("batch", [False, True], ids=["one_by_one", "batch"])
def test_max_cost_holds_across_eight_parallel_shards(capped, batch):
    folder, result, server, cap = capped[batch]
    assert result.returncode != 0  # both stop at the cap
    assert bool(server.batch_created) == batch
    in_flight = 8 * CONCURRENCY  # shards x calls (or requests of open batches) in flight
    largest = max(r["cost"] for panel in ("pw", "pws") for r in cache_records(folder, panel))
    for panel in ("pw", "pws"):
        spend = spent(folder / "cache", panel)
        print(f"{panel}: spent ${spend:.6f} of max_cost ${cap:.6f} ({spend / cap:.3f} x), "
              f"bound ${cap + in_flight * largest:.6f}")
        assert 0.5 * cap < spend <= cap + in_flight * largest, (panel, spend, cap)
        logs = "".join(p.read_text() for p in (folder / "results" / panel).rglob("*.log"))
        assert f"max_cost {cap} reached" in logs


# --- start-up checks -------------------------------------------------------------------------
def panel_with(stop, kind="preference_margins"):
    full = {"beta_halfwidth": None, "decisions": None, "epsilon": None, "level": 0.95,
            "sequence": "asymptotic", "min_items": 20, "max_items": None, "round_items": 50,
            "retire": False, "seed": 0, "forecast_from": None, "forecast_orders": 200}
    return {"kind": kind, "collect": {"stop": {**full, **stop}}}


@pytest.mark.parametrize("stop, kind, key", [
    ({}, "preference_margins", "names no target"),
    ({"decisions": ["calibrated"]}, "preference_margins", "`collect.stop.epsilon` is needed"),
    ({"beta_halfwidth": 0.1, "epsilon": -0.1}, "preference_margins", "`collect.stop.epsilon`"),
    ({"beta_halfwidth": 0.1, "level": 1.5}, "preference_margins", "`collect.stop.level`"),
    ({"beta_halfwidth": 0.1, "min_items": 50, "max_items": 10}, "preference_margins",
     "`collect.stop.min_items` (50) is above `max_items` (10)"),
    ({"beta_halfwidth": 0.1, "forecast_from": "nope"}, "preference_margins",
     "`collect.stop.forecast_from` 'nope'"),
    ({"beta_halfwidth": 0.1}, "pairwise_verdicts", "`collect.stop` is for pointwise"),
    ({"beta_halfwidth": 0.1, "retire": True}, "preference_margins",
     "`collect.stop.retire` works with `decisions` targets only"),
])
def test_bad_stop_settings_are_named(stop, kind, key):
    problems = check_stop("p", panel_with(stop, kind), {"p": {}})
    assert len(problems) == 1 and key in problems[0] and "panel 'p'" in problems[0]
    assert check_stop("p", panel_with({"beta_halfwidth": 0.1}), {"p": {}}) == []


@pytest.mark.slow
def test_bad_stop_fails_at_start_up(tmp_path):
    # two configs, a dry run each, side by side: the settings checks, and an unknown key (which
    # is reported alone, before them)
    settings, unknown = tmp_path / "settings", tmp_path / "unknown"
    configs = []
    for folder in (settings, unknown):
        folder.mkdir()
        configs.append(collection_config(folder, "http://127.0.0.1:9/v1", n_pairwise=10,
                                         n_pointwise=10))
    config, other = configs
    config["panels"]["pw"]["collect"]["stop"] = {"beta_halfwidth": 0.3, "min_items": 50,
                                                 "max_items": 10}
    config["panels"]["ls"]["collect"]["stop"] = {"beta_halfwidth": 0.3}
    del other["panels"]["ls"]
    other["panels"]["pw"]["collect"]["stop"] = {"beta_width": 0.3}  # an unknown target
    result, second = side_by_side((settings, config, "--dry-run"), (unknown, other, "--dry-run"),
                                  check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "Job stats" not in output
    assert "panel 'pw': `collect.stop.min_items` (50) is above `max_items` (10)" in output
    assert "panel 'ls': `collect.stop` is for pointwise collections" in output
    assert second.returncode != 0 and "beta_width" in second.stdout + second.stderr
    assert "beta_halfwidth" in second.stdout + second.stderr        # the nearest valid key


# --- the ledger ------------------------------------------------------------------------------
def test_ledger_shares_reservations_between_jobs(tmp_path):
    first, second = Ledger(tmp_path, "c", 1.0), Ledger(tmp_path, "c", 1.0)
    one = first.reserve(0.4)
    assert one and second.reserve(0.4)
    assert second.reserve(0.4) is None            # 0.8 reserved: another 0.4 does not fit
    first.settle(one, 0.1)                        # the call cost less than its estimate
    assert second.reserve(0.4) is not None
    assert second.view() == pytest.approx((0.1, 0.8))
    assert first.spent == pytest.approx(0.1)


def test_ledger_starts_from_the_cache_and_forgets_dead_jobs(tmp_path):
    cache = tmp_path / "c" / "judge_pointwise" / "j" / "shard0.jsonl"
    cache.parent.mkdir(parents=True)
    cache.write_text('{"key": "a", "cost": 0.7}\n{"key": "b", "cost": 0.2}\n')
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    ledger = Ledger(tmp_path, "c", 1.0)
    assert ledger.spent == pytest.approx(0.9)
    with open(ledger.path, "a") as handle:  # a reservation left by a killed job
        handle.write('{"reserve":"x","cost":0.05,"host":"%s","pid":%d,"time":0}\n'
                     % (ledger.host, dead.pid))
    assert ledger.view() == pytest.approx((0.9, 0.0))
    assert ledger.reserve(0.05) and ledger.reserve(0.1) is None
    # a call cached without the ledger (max_cost null then) is counted by the next job
    with open(cache, "a") as handle:
        handle.write('{"key": "c", "cost": 0.01}\n')
    assert Ledger(tmp_path, "c", 1.0).view() == pytest.approx((0.91, 0.05))


def _reserve_all(path, limit, barrier, results):
    ledger = Ledger(path, "c", limit)
    barrier.wait()
    granted = 0
    while (ticket := ledger.reserve(2.0 ** -7)) is not None:  # exact in binary
        time.sleep(0.002)                                      # the call is in flight
        ledger.settle(ticket, 2.0 ** -7)
        granted += 1
    results.put(granted)


def test_ledger_cap_holds_across_processes(tmp_path):
    context = multiprocessing.get_context("fork")
    results, barrier = context.Queue(), context.Barrier(8)
    jobs = [context.Process(target=_reserve_all, args=(tmp_path, 0.5, barrier, results))
            for _ in range(8)]
    for job in jobs:
        job.start()
    for job in jobs:
        job.join(timeout=60)
    granted = [results.get(timeout=5) for _ in jobs]
    assert sum(granted) == 64 and sum(g > 0 for g in granted) > 1  # the cap, shared
    assert Ledger(tmp_path, "c", 0.5).spent == pytest.approx(0.5)


@pytest.mark.slow
def test_a_judge_failing_where_it_would_score_low_gets_no_stop_unless_accepted(tmp_path):
    # the scorers agree on each item; scorer_x fails on 8 in 10 items whose chosen side it would
    # score low: the target is met from round 2, where the check flags scorer_x
    stop = {"decisions": ["calibrated"], "epsilon": 1.0, "round_items": 20, "min_items": 20}
    target = "results/pw/collect/stopping.csv"
    with JudgeServer(pointwise=SCORERS, api_key=SECRET, shared_quality=True,
                     unparseable_low={"scorer_x": 0.8}) as server:
        config = stop_config(tmp_path, server.base_url, stop, n_items=60, shards=1)
        snakemake(tmp_path, config, target)
        refused = pd.read_csv(tmp_path / target, keep_default_na=False)
        config["panels"]["pw"]["collect"]["stop"]["accept_informative_missing"] = True
        snakemake(tmp_path, config, target)
        accepted = pd.read_csv(tmp_path / target, keep_default_na=False)
    assert list(refused["informative_missing"].iloc[1:]) == ["scorer_x"] * 2
    assert not refused["stop"].any() and refused["items"].iloc[-1] == 60
    assert refused["reason"].iloc[1].startswith("target met but no stop")
    assert accepted["stop"].iloc[-1] and accepted["items"].iloc[-1] == 40
    assert "accepted" in accepted["reason"].iloc[-1]
