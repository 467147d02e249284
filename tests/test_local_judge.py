"""The whole collection loop against a real llama.cpp server (tests/llama_server.py: xllamacpp's
embedded server with SmolLM2-135M-Instruct, on 127.0.0.1, offline), through `snakemake`, with a
recording proxy in front of it that keeps what the server answered.

One server for the module; tiny item tables (one short LLMBar item for the Judge-LS panels, two
per language for the pointwise one: its SIGTERM test needs two shards of four calls), small
max_tokens, one server thread. Skipped with the reason when xllamacpp or the model package is not
installed (the README's test command installs both).
"""
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
import yaml
from conftest import readme_command
from llama_server import LlamaServer, RecordingProxy, missing
from snapshot import copy_repository

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "config" / "examples" / "local_judge.yaml"
pytestmark = [pytest.mark.slow, pytest.mark.local_judge]
# one model behind four endpoints; distinct model names let the proxy tell them apart (llama.cpp
# answers whatever model is asked for with the one it loaded)
JUDGE = {"temperature": 0.0, "seed": 0, "max_tokens": 32, "structured_output": True,
         "max_concurrency": 4, "timeout": 900.0, "api_key_env": None}
ENDPOINTS = {"smol": {**JUDGE, "model": "smol-t0"},
             "smol_warm": {**JUDGE, "model": "smol-warm", "temperature": 1.0, "seed": 3},
             "free": {**JUDGE, "model": "smol-free", "structured_output": False,
                      "max_tokens": 8},
             "translator": {**JUDGE, "model": "smol-translator", "structured_output": False,
                            "max_tokens": 8}}
PANELS = ("ls", "ls_free", "pw")
PW_TARGETS = ["results/pw/cbc/beta.csv", "results/pw/collect/usage.csv",
              "results/pw/collect/status.csv", "results/pw/collect/plan.csv"]
# the SIGTERM test's target: smol's scores table, made of its 2 shards
STOPPED = "results/pw/collect/scores/smol.parquet"
LS_TARGETS = ["results/ls/judge_ls/summary.md", "results/ls/collect/audit.csv",
              "results/ls/collect/usage.csv", "results/ls/collect/status.csv",
              "results/ls/collect/plan.csv"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The real server (skips every test that needs it, saying why, when it cannot start)."""
    if missing():
        pytest.skip(f"no local llama.cpp judge: {missing()}")
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with LlamaServer(parallel=2, log=log) as llama, \
            RecordingProxy(llama.base_url.removesuffix("/v1")) as proxy:
        yield proxy


def config(root: Path, base_url: str, panels: dict, cache: Path | None = None) -> dict:
    """The example's panels on the first item (pointwise: two per language), one target language,
    the test endpoints; calls cached in ``cache`` (default: ``root``/cache)."""
    example = yaml.safe_load(EXAMPLE.read_text())
    data = root / "data"
    data.mkdir()
    pd.read_csv(REPO / "data/examples/local_pairwise.csv").head(1).to_csv(
        data / "pairwise.csv", index=False)
    pointwise = pd.read_csv(REPO / "data/examples/local_pointwise.csv")
    pointwise.groupby("language").head(2).to_csv(data / "pointwise.csv", index=False)
    ls, pw = example["panels"]["local_ls"], example["panels"]["local_pw"]
    ls["collect"].update(items="pairwise.csv", translator="translator", judges=["smol"],
                         conditions={"zh": ls["collect"]["conditions"]["zh"]})
    pw["collect"].update(items="pointwise.csv")
    # a free-text judge, English only (no translation): cut off at 8 tokens, nothing parses
    ls_free = yaml.safe_load(yaml.safe_dump(ls))
    ls_free["collect"].update(translator=None, judges=["free"], conditions={}, tie_probes=[])
    chosen = {"ls": ls, "pw": pw, "ls_free": ls_free}
    for name, judges in panels.items():
        chosen[name]["collect"]["judges"] = judges
        if name == "pw":
            chosen[name]["backbones"] = judges
    return {"data_dir": str(data),
            "endpoints": {n: {**e, "base_url": base_url} for n, e in ENDPOINTS.items()},
            "collection": {**example["collection"], "cache_dir": str(cache or root / "cache"),
                           "progress_interval": 5},
            "simulation": example["simulation"],
            "panels": {name: chosen[name] for name in panels}}


def snakemake(root: Path, settings: dict, *targets, popen=False, check=True):
    """Snakemake on ``targets`` in ``root``. The greedy scheduler: the default one starts an ILP
    solver (pulp's cbc) each time it picks jobs, several seconds of CPU over a collection. One
    OpenBLAS thread: each of the 30-odd jobs would start a pool of them for tables of a few rows
    (about 0.05 s of CPU a job on 2 cores)."""
    (root / "config.yaml").write_text(yaml.safe_dump(settings, allow_unicode=True))
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--cores", "2",
               "--scheduler", "greedy", *targets, "--configfile", str(root / "config.yaml")]
    env = {**os.environ, "PYTHONPATH": str(REPO), "OPENBLAS_NUM_THREADS": "1"}
    if popen:
        return subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)
    result = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
    assert result.returncode == 0 or not check, result.stdout[-3000:] + result.stderr[-6000:]
    return result


def answered_log(log):
    return [e for e in log if e["status"] == 200]


def answered(proxy, start=0):
    return answered_log(proxy.log[start:])


def calls(root: Path, panel: str) -> pd.DataFrame:
    files = sorted((root / "results" / panel / "collect").glob("*/**/shard*.parquet"))
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


def cache_records(root: Path, panel: str) -> pd.DataFrame:
    """The records of the cache the run in ``root`` used (its config's ``cache_dir``)."""
    cache = yaml.safe_load((root / "config.yaml").read_text())["collection"]["cache_dir"]
    files = sorted((Path(cache) / panel).rglob("shard*.jsonl"))
    return pd.concat([pd.read_json(f, lines=True) for f in files], ignore_index=True)


@pytest.fixture(scope="module")
def stopped(server, tmp_path_factory):
    """smol's pointwise collection in 2 shards, SIGTERM to the whole process group (as a
    cluster's time limit) after two answers, then the same command again. Its cache is the one
    `collected` uses, so smol's 8 pointwise calls are made once in the module, here. Nothing
    asserted here (the SIGTERM test does): a failure fails that test, not every test."""
    root, cache = tmp_path_factory.mktemp("stopped"), tmp_path_factory.mktemp("cache")
    settings = config(root, server.base_url, {"pw": ["smol"]}, cache)
    settings["panels"]["pw"]["collect"]["shards"] = 2
    # one call in flight per shard, so that calls are still waiting when SIGTERM comes (with all
    # of a shard's calls in flight, it finishes them and has nothing left to stop)
    settings["endpoints"]["smol"]["max_concurrency"] = 1
    start = len(server.log)
    run = snakemake(root, settings, STOPPED, popen=True)
    deadline = time.monotonic() + 600
    while len(answered(server, start)) < 2 and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    if run.poll() is None:
        os.killpg(run.pid, signal.SIGTERM)
    output, _ = run.communicate(timeout=600)
    logs = "".join(p.read_text() for p in (root / "results/pw/logs").glob("judge_*.log"))
    stop = SimpleNamespace(root=root, cache=cache, returncode=run.returncode, output=output,
                           made_target=(root / STOPPED).exists(), before=answered(server, start),
                           logs=logs)  # the shard logs before the rerun writes them again
    stop.rerun = snakemake(root, settings, STOPPED, check=False)
    stop.every = answered(server, start)
    return stop


@pytest.fixture(scope="module")
def collected(server, stopped, tmp_path_factory):
    """One run of three panels (Judge-LS with a structured judge and a translator; Judge-LS with
    a free-text judge; pointwise with two structured judges, smol's replies all in the cache
    from `stopped`), each endpoint allowed 4 calls in flight against the server's 2 slots. With
    --keep-going: ls_free's analysis is refused."""
    root = tmp_path_factory.mktemp("collected")
    settings = config(root, server.base_url, {"ls": ["smol"], "pw": ["smol", "smol_warm"],
                                              "ls_free": ["free"]}, stopped.cache)
    start = time.monotonic()
    result = snakemake(root, settings, "--keep-going", *LS_TARGETS, *PW_TARGETS,
                       *(t.replace("/ls/", "/ls_free/") for t in LS_TARGETS if "audit" not in t),
                       check=False)
    print(f"collection against llama.cpp: {time.monotonic() - start:.1f} s, "
          f"{len(server.log)} calls")
    return root, list(server.log), result


def test_collections_run_end_to_end_and_the_analyses_read_them(collected, server):
    root, log, result = collected
    out = root / "results"
    # the one failure: ls_free's Judge-LS, whose judge has no usable English judgment; the
    # message names the stage, the counts, the files and the setting (issue: it said "reference
    # condition 'en' is not among the conditions []")
    failed = set(re.findall(r"Error in rule (\w+)", result.stderr))
    assert result.returncode != 0 and failed == {"judge_ls"}, result.stderr[-6000:]
    refused = (out / "ls_free" / "logs" / "judge_ls.log").read_text()
    assert ("judge(s) ['free'] have no usable judgment in the reference condition 'en'"
            in refused)
    assert "judge_pairwise free en: 2 calls: 2 unparseable (2 cut off at max_tokens)" in refused
    assert "raise endpoints.free.max_tokens (now 8)" in refused and "status.csv" in refused
    assert not (out / "ls_free" / "judge_ls" / "summary.md").exists()
    for name in ("accuracy", "flips", "position", "tie_probe"):
        assert len(pd.read_csv(out / "ls" / "judge_ls" / f"{name}.csv")), name
    beta = pd.read_csv(out / "pw" / "cbc" / "beta.csv")
    assert len(beta) == 2 * 2                           # 2 languages x 2 judges
    # no call was sent twice (in the module: smol's stopped and resumed collection included),
    # and none failed although up to 4 calls a job, 2 jobs at once, shared 2 slots (they queued)
    assert server.max_in_flight > 2
    assert all(e["status"] == 200 for e in log)
    assert not Counter(e["body"] for e in log) - Counter(set(e["body"] for e in log))
    table = pd.concat([calls(root, p) for p in PANELS], ignore_index=True)
    assert (table["status"] != "failed").all()
    # the server answers as the model it loaded, not the one asked for: both are recorded
    sent = table[table["status"] != "no_input"]
    assert set(sent["served_model"]) == {"smollm2-135m"}
    assert set(sent["model"]) <= {e["model"] for e in ENDPOINTS.values()}
    shard_log = (out / "pw" / "logs" / "judge_pointwise_smol_warm_0.log").read_text()
    assert "the server answered as model ['smollm2-135m'], not 'smol-warm'" in shard_log


def test_structured_output_parses_and_free_text_is_parsed_or_counted(collected):
    root, _, _ = collected
    table = pd.concat([calls(root, p) for p in PANELS], ignore_index=True)
    sent = table[table["status"] != "no_input"]
    structured = sent[sent["endpoint"].isin(["smol", "smol_warm"])]
    assert len(structured) and (structured["status"] == "ok").all()   # the grammar held
    free = sent[sent["endpoint"] == "free"]
    assert len(free) and set(free["status"]) <= {"ok", "parse_failure"}
    failures = free[free["status"] == "parse_failure"]
    assert failures["raw"].str.strip().str.len().gt(0).all()         # raw text kept
    for panel in ("ls", "ls_free"):
        verdicts = pd.read_parquet(root / f"results/{panel}/collect/verdicts.parquet")
        invalid = verdicts["status"] != "ok"
        assert (verdicts.loc[invalid, "verdict"] == "").all()        # never a tie, never A/B
    # status.csv counts what the cache holds (the cache's status for each call's key)
    for panel in PANELS:
        table, cache = calls(root, panel), cache_records(root, panel).set_index("key")
        sent = table[table["status"] != "no_input"]
        assert sent["key"].isin(cache.index).all()
        expected = sent.assign(status=sent["key"].map(cache["status"]),
                               truncated=sent["key"].map(cache["truncated"]))
        status = pd.read_csv(root / "results" / panel / "collect" / "status.csv")
        by = status.groupby(["stage", "endpoint"])[["n_ok", "n_parse_failure",
                                                    "n_truncated"]].sum()
        for (stage, endpoint), part in expected.groupby(["stage", "endpoint"]):
            row = by.loc[(stage, endpoint)]
            assert row["n_ok"] == (part["status"] == "ok").sum(), (panel, stage, endpoint)
            assert row["n_parse_failure"] == (part["status"] == "parse_failure").sum()
            assert row["n_truncated"] == part["truncated"].sum()


def test_cut_off_replies_are_recorded_truncated_and_never_scored(collected):
    root, _, _ = collected
    table = pd.concat([calls(root, "ls"), calls(root, "ls_free")], ignore_index=True)
    cut = table[table["truncated"]]
    assert len(cut) and (cut["finish_reason"] == "length").all()
    assert (cut["status"] == "parse_failure").all() and cut["value"].isna().all()
    texts = pd.read_parquet(root / "results/ls/collect/texts/zh.parquet")
    assert (texts.loc[texts["truncated"], "text"] == "").all()       # a cut-off translation unused
    verdicts = pd.read_parquet(root / "results/ls/collect/verdicts.parquet")
    assert (verdicts.loc[verdicts["truncated"], "verdict"] == "").all()
    audit = pd.read_csv(root / "results/ls/collect/audit.csv")
    assert len(audit) == 1 * 3                                        # 1 item x 3 fields
    # what the cut-off translations left unjudged is named, with the setting to change
    if (verdicts["status"] == "no_input").any():
        log = (root / "results/ls/logs/judge_ls.log").read_text()
        assert "translate (translator) zh" in log and "status.csv" in log and "audit.csv" in log
        assert "endpoints.translator.max_tokens (now 8)" in log


def test_usage_equals_the_servers_call_for_call_and_the_plan_is_close(collected):
    root, log, _ = collected
    ours = Counter()
    for panel in PANELS:
        table = calls(root, panel)
        made = table[table["status"].isin(["ok", "parse_failure"])].drop_duplicates("key")
        ours += Counter(zip(made["model"], made["input_tokens"], made["output_tokens"],
                            made["raw"]))
        usage = pd.read_csv(root / "results" / panel / "collect" / "usage.csv")
        usage = usage.set_index(["endpoint", "stage"])
        sums = made.groupby(["endpoint", "stage"])[["input_tokens", "output_tokens"]].sum()
        assert (usage.loc[sums.index, ["input_tokens", "output_tokens"]] == sums).all().all()
        # the plan's input estimate (4 characters a token) is within a factor of 2 per call of
        # the count of the real tokenizer and chat template
        plan = pd.read_csv(root / "results" / panel / "collect" / "plan.csv")
        plan = plan[plan["endpoint"] != "total"].set_index(["endpoint", "stage"])
        actual = made.groupby(["endpoint", "stage"])["input_tokens"].mean()
        ratio = actual / (plan["input_tokens"] / plan["calls"]).reindex(actual.index)
        print("actual / planned input tokens per call:", ratio.round(2).to_dict())
        assert ratio.between(0.5, 2.0).all(), ratio
    # call for call: every reply the server sent, with its usage, is one row of the calls tables
    theirs = Counter((e["request_model"], e["usage"]["prompt_tokens"],
                      e["usage"]["completion_tokens"], e["content"]) for e in answered_log(log))
    assert ours == theirs


def test_sigterm_then_rerun_calls_no_one_twice_and_gives_the_same_tables(stopped, collected):
    """The collection stopped by SIGTERM and run again (`stopped`): every answer made before the
    stop is reused, the scores table is made of the replies the server sent (each once), and it
    has the rows, columns and types of an uninterrupted run's (`collected`'s smol_warm table: one
    shard, every call made in that run). Its scores are compared with the one-shard table
    `collected` built from the same cached replies, not with a run that called again: that run
    would batch other calls beside these, and llama.cpp's batched decoding changes a small
    model's greedy reply now and then (seen in CI: a 5 became a 1)."""
    first_root, _, _ = collected
    assert stopped.returncode != 0, stopped.output[-3000:]
    assert not stopped.made_target
    assert len(stopped.before) >= 2, "fewer than 2 answers before the stop (at most 600 s)"
    assert len(stopped.before) < 2 * 2 * 2 * 2                      # 8 calls: 2 items x 2 x 2
    assert "stopped (SIGTERM)" in stopped.logs
    rerun = stopped.rerun
    assert rerun.returncode == 0, rerun.stdout[-3000:] + rerun.stderr[-6000:]
    every = stopped.every
    assert len(every) == 8 and len({e["body"] for e in every}) == 8   # none made twice
    # every reply the server sent is one call record, the ones before the stop included
    made = calls(stopped.root, "pw")
    made = made[made["status"].isin(["ok", "parse_failure"])].drop_duplicates("key")
    assert Counter(made["raw"]) == Counter(e["content"] for e in every)
    # the same rows, columns and types as the uninterrupted run (their order follows the shards)
    keys = ["language", "item_numeric_id", "subset"]
    again = pd.read_parquet(stopped.root / STOPPED).sort_values(keys, ignore_index=True)
    uninterrupted = pd.read_parquet(first_root / "results/pw/collect/scores/smol_warm.parquet")
    uninterrupted = uninterrupted.sort_values(keys, ignore_index=True)
    assert list(again.columns) == list(uninterrupted.columns)
    assert (again.dtypes == uninterrupted.dtypes).all()
    pd.testing.assert_frame_equal(again[keys], uninterrupted[keys])
    scores = again[["chosen_score", "rejected_score"]]
    assert scores.notna().any().all() and scores.stack().isin(range(1, 6)).all()  # 1-5 rubric
    one_shard = pd.read_parquet(first_root / STOPPED).sort_values(keys, ignore_index=True)
    pd.testing.assert_frame_equal(again, one_shard)


def test_readme_local_example_is_the_example_and_plans_in_a_clean_copy(tmp_path):
    """The README's commands name this example and this server script, and its snakemake command,
    verbatim in a copy of the repository, builds the plan and the whole DAG (the full run needs
    the server on port 8080 and about 120 calls: checked by hand, docs/judges.md)."""
    root = copy_repository(tmp_path / "polyjudge")
    server_command = readme_command("python tests/llama_server.py --port 8080")
    command = readme_command("snakemake --cores 2 --configfile config/examples/local_judge.yaml")
    example = yaml.safe_load(EXAMPLE.read_text())
    assert {e["base_url"] for e in example["endpoints"].values()} == {
        "http://127.0.0.1:8080/v1"} and "--port 8080" in server_command
    result = subprocess.run(f"{command} -n", shell=True, cwd=root, capture_output=True,
                            text=True, env={**os.environ, "PATH": f"{Path(sys.executable).parent}"
                                            f":{os.environ['PATH']}"})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for job in ("translate", "judge_pairwise", "judge_pointwise", "judge_ls", "cbc"):
        assert job in result.stdout, job
