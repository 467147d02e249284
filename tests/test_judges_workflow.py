"""End to end: the real workflow collects a Judge-LS panel and a pointwise panel from the local
server (tests/judge_server.py) with planted judges and injected faults, and the existing analyses
recover the planted values. Also: a run stopped by max_cost and restarted repeats no request;
usage and cost equal the server's counts; the API key is written nowhere. The restart and the
Judge-LS collection are one snakemake run (module fixture `collected`), each panel with its own
server."""
import copy
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
import yaml
from conftest import assert_strict_json
from judge_items import pairwise_items, pointwise_items
from judge_server import JudgeServer

from polyjudge.analyses import judge_ls

REPO = Path(__file__).resolve().parents[1]
SECRET = "sk-polyjudge-test-5f0c1e0b9a"
FAULTS = {"429": 0.03, "500": 0.03, "slow": 0.01, "length": 0.01}
SCORERS = {"scorer_x": {"zh": -1}, "scorer_y": {"es": 1}}
PRICES = {"translator": (0.4, 1.6), "judge_a": (0.4, 1.6), "judge_b": (1.0, 5.0),
          "scorer_x": (0.1, 0.4), "scorer_y": (0.2, 0.8)}


def planted_judges():
    return judge_ls.default_judges()


def planted_truth():
    """Exact expectations of the planted judges (the synthetic protocol's truth frames)."""
    return judge_ls.simulate_judge_ls(0, n_items=10, judges=planted_judges(),
                                      probe_languages=("en", "zh"))[1]


def make_server():
    return JudgeServer(pairwise=planted_judges(), pointwise=SCORERS, faults=FAULTS,
                       unparseable={"judge_a": 0.02, "judge_b": 0.04, "scorer_y": 0.02},
                       api_key=SECRET, slow_seconds=0.1)


def collection_config(tmp_path, base_url, n_pairwise=0, n_pointwise=0, max_cost=None, shards=1):
    """Only the panels asked for (n > 0) are in the config: they replace the default panels."""
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    pairwise_items(n_pairwise, seed=3).to_parquet(data / "items.parquet")
    pointwise_items(n_pointwise, ["en", "zh", "es"]).to_csv(data / "pointwise.csv", index=False)
    endpoints = {name: {"base_url": base_url, "model": name, "api_key_env": "POLYJUDGE_TEST_KEY",
                        "max_concurrency": 8, "timeout": 10.0,
                        "structured_output": name in ("judge_a", "scorer_x"),
                        "price_input_per_million": p_in, "price_output_per_million": p_out}
                 for name, (p_in, p_out) in PRICES.items()}
    panels = {
            "ls": {"kind": "pairwise_verdicts", "source": "collection", "reference": "en",
                   "conditions": None, "on_duplicate": "error",
                   "collect": {"items": "items.parquet", "translator": "translator",
                               "judges": ["judge_a", "judge_b"],
                               "conditions": {"zh": {"kind": "full", "language": "Chinese"},
                                              "cs": {"kind": "code_switched",
                                                     "language": "Chinese"}},
                               "tie_probes": ["zh"], "shards": shards},
                   "analyses": ["judge_ls"]},
            "pw": {"kind": "preference_margins", "languages": ["en", "zh", "es"],
                   "score_range": [-4, 4], "missing": "omit", "estimator": "available_means",
                   "collect": {"items": "pointwise.csv", "judges": list(SCORERS),
                               "shards": shards},
                   "analyses": ["cbc"]},
    }
    wanted = {"ls": n_pairwise, "pw": n_pointwise}
    return {
        "data_dir": str(data),
        "endpoints": endpoints,
        "collection": {"cache_dir": str(tmp_path / "cache"), "max_cost": max_cost,
                       "progress_interval": 0.5,
                       "retries": {"max_attempts": 6, "base_delay": 0.02, "max_delay": 0.2}},
        "judge_ls": {"confidence": 0.999},
        "panels": {name: panel for name, panel in panels.items() if wanted[name]},
        "simulation": {"scenarios": {}},
    }


PAIRWISE_TARGETS = ["results/ls/judge_ls/summary.md", "results/ls/collect/audit.csv",
                    *(f"results/ls/collect/{f}" for f in ("usage.csv", "status.csv", "plan.csv"))]
POINTWISE_TARGETS = ["results/pw/cbc/beta.csv", "results/pw/collect/usage.csv",
                     "results/pw/collect/status.csv"]


def snakemake(workdir, config, *args, check=True):
    path = Path(workdir) / "collect.yaml"
    path.write_text(yaml.safe_dump(config))
    env = {**os.environ, "PYTHONPATH": str(REPO), "POLYJUDGE_TEST_KEY": SECRET}
    result = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"),
                             "--cores", "2", *args, "--configfile", str(path)],
                            cwd=workdir, capture_output=True, text=True, env=env)
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake failed:\n{result.stdout[-3000:]}\n"
                             f"{result.stderr[-5000:]}")
    return result


def side_by_side(*runs, check=True):
    """``snakemake(workdir, config, *args)`` for each ``(workdir, config, *args)``, all at once:
    independent collections share the cores instead of waiting for each other."""
    with ThreadPoolExecutor(len(runs)) as pool:
        return list(pool.map(lambda run: snakemake(*run, check=check), runs))


def no_repeated_answers(server):
    answered = pd.Series([e["body"] for e in server.log if e["status"] == 200])
    return not answered.duplicated().any()


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    """The pointwise panel (2 shards) stopped by max_cost, then one run resuming it beside the
    Judge-LS collection (1 shard); each panel's endpoints on a server of its own, so each
    server's counts are its panel's. What the capped run left is kept for the test."""
    folder = tmp_path_factory.mktemp("collected")
    with make_server() as ls_server, make_server() as pw_server:
        config = collection_config(folder, pw_server.base_url, n_pairwise=80, n_pointwise=20,
                                   shards=2)
        config["panels"]["ls"]["collect"]["shards"] = 1
        for name in ("translator", "judge_a", "judge_b"):
            config["endpoints"][name]["base_url"] = ls_server.base_url
        capped = copy.deepcopy(config)
        del capped["panels"]["ls"]
        capped["collection"]["max_cost"] = 0.0004
        first = snakemake(folder, capped, "--keep-going", *POINTWISE_TARGETS, check=False)
        logs = "".join(p.read_text() for p in (folder / "results").rglob("logs/*.log"))
        made = sum(e["status"] == 200 for e in pw_server.log)
        snakemake(folder, config, *PAIRWISE_TARGETS, *POINTWISE_TARGETS)
        yield SimpleNamespace(folder=folder, config=config, ls_server=ls_server,
                              pw_server=pw_server, first=first, capped_logs=logs, made=made)


@pytest.mark.slow
def test_judge_ls_collection_recovers_planted_judges(collected):
    server, folder = collected.ls_server, collected.folder
    assert server.authorization == {f"Bearer {SECRET}"}
    assert no_repeated_answers(server)
    assert assert_strict_json(folder / "results") >= 1
    faults = pd.Series([e["status"] for e in server.log]).value_counts()
    assert faults[429] > 0 and faults[500] > 0
    out = folder / "results" / "ls"
    # the existing Judge-LS tables recover every planted value inside its (99.9%) interval
    tables = {name: pd.read_csv(out / "judge_ls" / f"{name}.csv")
              for name in ("accuracy", "flips", "position", "tie_probe")}
    recovered = judge_ls.recovery_table(tables, planted_truth())
    # per judge: accuracy, position inconsistency, first seat (3 conditions each), flips, probes
    assert len(recovered) == 2 * (3 + 3 + 3 + 2 + 2), recovered
    assert recovered["covered"].all(), recovered[~recovered["covered"]]
    # parse failures and truncated replies are their own status, never verdicts
    verdicts = pd.read_parquet(out / "collect" / "verdicts.parquet")
    assert len(verdicts) == 2 * 80 * 8
    bad = verdicts["status"] != "ok"
    assert bad.any() and (verdicts.loc[bad, "verdict"] == "").all()
    assert verdicts.loc[verdicts["truncated"], "status"].ne("ok").all()
    status = pd.read_csv(out / "collect" / "status.csv")
    judged = status[status["stage"] == "judge_pairwise"].set_index(["endpoint", "condition"])
    assert judged["n_parse_failure"].sum() == (verdicts["status"] == "parse_failure").sum() > 0
    assert judged["n_failed"].sum() == 0
    accuracy = tables["accuracy"]
    pooled = accuracy[(accuracy["subset"] == "all") & (accuracy["order"] == "all")]
    assert pooled["n_invalid"].sum() == (bad & (verdicts["gold"] != "Tie")).sum()
    # actual usage and cost equal the server's counts; the plan counted every call
    usage = pd.read_csv(out / "collect" / "usage.csv")
    check_usage(usage, server)
    plan = pd.read_csv(out / "collect" / "plan.csv").set_index(["endpoint", "stage"])
    assert plan.loc[("translator", "translate"), "calls"] == 80 * 3 * 2
    assert plan.loc[("judge_a", "judge_pairwise"), "calls"] == 80 * 8
    total = pd.read_csv(out / "collect" / "plan_total.csv")  # the totals apart
    assert "total" not in plan.index.get_level_values("endpoint")
    assert len(total) == 1 and total["calls"].iloc[0] == plan["calls"].sum()
    assert all(len(repr(c).split(".")[-1]) <= 7 for c in plan["cost_usd"])
    # the audit ran on the collected translations
    assert len(pd.read_csv(out / "collect" / "audit.csv")) == 80 * 3 * 2
    # the key went over the wire and nowhere else (in either collection's files)
    for path in folder.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def check_usage(usage, server):
    per_endpoint = usage[usage["endpoint"] != "total"].groupby("endpoint")[
        ["input_tokens", "output_tokens", "cost_usd"]].sum()
    assert set(per_endpoint.index) == set(server.usage)
    for name, counts in server.usage.items():
        p_in, p_out = PRICES[name]
        assert per_endpoint.loc[name, "input_tokens"] == counts["input_tokens"], name
        assert per_endpoint.loc[name, "output_tokens"] == counts["output_tokens"], name
        assert per_endpoint.loc[name, "cost_usd"] == pytest.approx(
            (counts["input_tokens"] * p_in + counts["output_tokens"] * p_out) / 1e6)


@pytest.mark.slow
def test_pointwise_collection_stopped_by_max_cost_resumes_without_repeats(collected):
    folder, server, made = collected.folder, collected.pw_server, collected.made
    assert collected.first.returncode != 0
    logs = collected.capped_logs
    assert "max_cost 0.0004 reached" in logs and "calls not made" in logs
    assert 0 < made < 2 * 20 * 3 * 2
    # the run without max_cost (beside the Judge-LS collection) made the rest, none twice
    assert no_repeated_answers(server)
    answered = sum(e["status"] == 200 for e in server.log)
    assert answered == 2 * 20 * 3 * 2
    usage = pd.read_csv(folder / "results/pw/collect/usage.csv")
    check_usage(usage, server)
    total = usage.set_index("endpoint").loc["total"]
    assert total["calls_made_this_run"] == answered - made and total["calls"] == answered
    # the scores are exactly the planted ones, and CBC read them as a preference panel
    scores = pd.read_parquet(folder / "results/pw/collect/scores/scorer_x.parquet")
    assert len(scores) == 20 * 3
    ok = scores["chosen_status"] == "ok"
    planted = [server.planted_score("scorer_x", str(i), lang, "chosen")
               for i, lang in zip(scores["item_numeric_id"], scores["language"])]
    assert (scores.loc[ok, "chosen_score"] == pd.Series(planted)[ok]).all()
    assert len(pd.read_csv(folder / "results/pw/cbc/beta.csv")) == 3 * 2
    log = (folder / "results/pw/logs/judge_pointwise_scorer_x_0.log").read_text()
    assert "calls/s" in log and "ETA" in log                 # progress lines
    # changing one judge's settings calls only that judge again (every judge's shards are
    # asked for; nothing downstream of them is rebuilt)
    config = copy.deepcopy(collected.config)
    config["endpoints"]["scorer_y"]["max_tokens"] = 64
    snakemake(folder, config, *(f"results/pw/collect/judge_pointwise/{judge}/shard{shard}.parquet"
                                for judge in SCORERS for shard in (0, 1)))
    later = [e for e in server.log if e["status"] == 200][answered:]
    assert len(later) == 20 * 3 * 2 and {e["model"] for e in later} == {"scorer_y"}
    assert no_repeated_answers(server)
