"""The SLURM profile against a real SLURM cluster (start one with `.ci/slurm.sh start`).

Skipped unless `sinfo` shows an idle node. Small DAGs only: every SLURM job starts snakemake
twice (the job, then its step), and the node runs one job per CPU.
"""
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import DEVAI_DIR

REPO = Path(__file__).resolve().parents[1]
PROFILE = REPO / "profiles" / "slurm"
RUN_TIMEOUT = 240  # seconds for one snakemake run on the cluster
# faster polling than the profile's: the test DAG has short jobs
FAST_POLLING = ["--slurm-init-seconds-before-status-checks", "2",
                "--seconds-between-status-checks", "2"]
# `python -m snakemake`, with the status-poll interval held at --seconds-between-status-checks:
# the SLURM plugin adds 10 s to it after each poll that sees no job end (2, 12, 22, ... s) and a
# run ends only after the poll it sleeps in (these tests took 1.6 times as long). Only the
# submitting snakemake polls (local runs do not); the profile and the jobs are as users run them.
STEADY_POLLING = """
from snakemake_interface_executor_plugins.executors.remote import RemoteExecutor
from snakemake.cli import main

assert isinstance(vars(RemoteExecutor).get("next_seconds_between_status_checks"), property), (
    "the executor interface changed: update STEADY_POLLING in tests/test_slurm.py")
RemoteExecutor.next_seconds_between_status_checks = property(
    lambda self: self.workflow.remote_execution_settings.seconds_between_status_checks,
    lambda self, seconds: None)
main()
"""
# the part of the DAG under test: these rules' jobs and what they need (a small DAG on purpose)
UNTIL = ["--until", "cbc"]
# ... and with the CMI permutation null, whose shards must run as separate SLURM jobs
UNTIL_SHARDS = ["--until", "cbc", "cmi"]
SUBMITTED = re.compile(r"Job (\d+) has been submitted with SLURM jobid (\d+) \(log: (\S+)\)")
RULE_BLOCK = re.compile(r"^(localrule|rule) (\w+):\n(?:    .*\n)*?    jobid: (\d+)$", re.M)

pytestmark = [pytest.mark.slow, pytest.mark.slurm]


def slurm(*args, timeout=20):
    """Run a SLURM client command; its stdout."""
    return subprocess.run(list(args), capture_output=True, text=True, timeout=timeout,
                          check=True).stdout


@pytest.fixture(scope="module", autouse=True)
def cluster():
    """Skip the module unless a SLURM node is idle."""
    if shutil.which("sinfo") is None:
        pytest.skip("no SLURM here (`sinfo` not found); start one with `.ci/slurm.sh start`")
    if os.environ.get("POLYJUDGE_TEST_SLURM_DOWN"):  # tests/conftest.py found no controller
        pytest.skip(f"SLURM is not reachable ({os.environ['POLYJUDGE_TEST_SLURM_DOWN']}); "
                    "start one with `.ci/slurm.sh start`")
    try:
        sinfo = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], capture_output=True, text=True,
                               timeout=30)
    except subprocess.TimeoutExpired:
        pytest.skip("SLURM does not answer (`sinfo` timed out)")
    if sinfo.returncode != 0:
        last = (sinfo.stderr.strip().splitlines() or ["no message"])[-1]
        pytest.skip(f"SLURM is not reachable ({last}); start one with `.ci/slurm.sh start`")
    states = sinfo.stdout.split()
    if "idle" not in states:
        pytest.skip(f"no idle SLURM node (node states: {states or 'none'})")


def snakemake_command(*args):
    """The command that runs the repository's workflow with ``args`` (with STEADY_POLLING)."""
    return [sys.executable, "-c", STEADY_POLLING, "-s", str(REPO / "Snakefile"), *args]


def snakemake(workdir, *args, timeout=RUN_TIMEOUT):
    """Run the repository's workflow in ``workdir``; the finished process."""
    return subprocess.run(snakemake_command(*args), cwd=workdir, capture_output=True, text=True,
                          timeout=timeout)


def slurm_args(prefix, until=UNTIL):
    """The SLURM profile; ``prefix`` names this run's jobs so the test can find them."""
    return ["--workflow-profile", str(PROFILE), "--configfile", "../config.yaml", *until,
            "--slurm-jobname-prefix", prefix, *FAST_POLLING]


def checked(result):
    """stdout and stderr of a run that must have succeeded."""
    text = result.stdout + result.stderr
    assert result.returncode == 0, f"snakemake failed:\n{text[-6000:]}"
    return text


# one panel: the null's shards are the rule with parallel jobs (one SLURM job each); every SLURM
# job costs two snakemake start-ups and a status-poll interval, so the DAG is kept to five jobs
PANEL = "mine"
INFORMATION = {"k": 2, "permutations": 20, "shards": 2, "seed": 407, "conventions": ["protocol"]}


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A small own-data panel in a folder; workdirs are subfolders of it."""
    root = tmp_path_factory.mktemp("slurm")
    runs = pd.read_parquet(DEVAI_DIR / "run_level_scores.parquet")
    runs = runs[runs["task"].isin(sorted(runs["task"].unique())[:20])]
    subset = runs[runs["backbone"].isin(["gpt-4o", "qwen3.5-9b", "gpt-5.4"])
                  & runs["language"].isin(["English", "Spanish", "Hindi"])]
    subset.to_csv(root / f"{PANEL}.csv", index=False)
    panels = {PANEL: {"kind": "judge_runs", "runs": f"{PANEL}.csv", "columns": {},
                      "score_range": [0, 100], "missing": "error",
                      "analyses": ["cbc", "information"]}}
    config = {"data_dir": str(root), "panels": panels, "simulation": {"scenarios": {}},
              "information": INFORMATION}
    (root / "config.yaml").write_text(yaml.safe_dump(config))
    return root


@pytest.fixture(scope="module")
def local_results(project):
    """The references, the same config run locally with --cores 2: "until" (UNTIL's results)
    and "shards" (UNTIL_SHARDS'). One workdir, run to UNTIL, its results copied aside, then run
    on to UNTIL_SHARDS: ingest and cbc run once for both."""
    workdir = project / "local"
    workdir.mkdir()
    local = ["--cores", "2", "--configfile", "../config.yaml"]
    checked(snakemake(workdir, *local, *UNTIL))
    until = shutil.copytree(workdir / "results", project / "local_until" / "results")
    checked(snakemake(workdir, *local, *UNTIL_SHARDS))
    return {"until": until, "shards": workdir / "results"}


def assert_same_results(got, expected):
    """Same result files; CSV/JSON byte-identical, Parquet frame-equal (logs, timings excluded)."""
    def files(root):
        return {p.relative_to(root) for p in root.rglob("*") if p.is_file()
                and not {"logs", "benchmarks"} & set(p.relative_to(root).parts)}

    assert files(got) == files(expected)
    for relative in sorted(files(expected)):
        if relative.suffix == ".parquet":
            pd.testing.assert_frame_equal(pd.read_parquet(got / relative),
                                          pd.read_parquet(expected / relative))
        else:
            assert (got / relative).read_bytes() == (expected / relative).read_bytes(), relative


def slurm_jobs(prefix):
    """SLURM job id -> (state, comment) of the jobs whose name starts with ``prefix``."""
    lines = slurm("squeue", "-h", "--states=all", "-o", "%i|%j|%T|%k").splitlines()
    rows = [line.split("|") for line in lines]
    return {row[0]: (row[2], row[3]) for row in rows if row[1].startswith(prefix + "_")}


def test_slurm_run_matches_local_run_and_each_job_is_its_own_slurm_job(project, local_results):
    workdir = project / "cluster"
    workdir.mkdir()
    prefix = f"jc{os.getpid()}a"
    text = checked(snakemake(workdir, *slurm_args(prefix, UNTIL_SHARDS)))
    assert_same_results(workdir / "results", local_results["shards"])

    # every non-local job was submitted as its own SLURM job; local rules were not
    rules = {int(jobid): (kind, rule) for kind, rule, jobid in RULE_BLOCK.findall(text)}
    submitted = {int(job): (slurm_id, Path(log)) for job, slurm_id, log in SUBMITTED.findall(text)}
    remote = {job for job, (kind, _) in rules.items() if kind == "rule"}
    assert remote and {kind for kind, _ in rules.values()} <= {"rule", "localrule"}
    assert set(submitted) == remote  # a localrule job is never submitted
    slurm_ids = [slurm_id for slurm_id, _ in submitted.values()]
    assert len(set(slurm_ids)) == len(slurm_ids)
    # ... and SLURM ran each of them to completion, with the job id in its kept log's name
    jobs = slurm_jobs(prefix)
    assert set(jobs) == set(slurm_ids)
    for job, (slurm_id, log) in submitted.items():
        rule = rules[job][1]
        state, comment = jobs[slurm_id]
        assert state == "COMPLETED" and re.fullmatch(f"rule_{rule}(_wildcards_.*)?", comment)
        assert log.name == f"{slurm_id}.log" and f"rule {rule}:" in log.read_text()
    # the permutation null ran as one SLURM job per (panel, convention, shard)
    shard_ids = {slurm_id for job, (slurm_id, _) in submitted.items()
                 if rules[job][1] == "cmi_null_shard"}
    assert {jobs[slurm_id][1] for slurm_id in shard_ids} == {
        f"rule_cmi_null_shard_wildcards_{PANEL}_{convention}_{shard}"
        for convention in INFORMATION["conventions"] for shard in range(INFORMATION["shards"])}
    assert len(shard_ids) == len(INFORMATION["conventions"]) * INFORMATION["shards"] > 1


def test_a_cancelled_job_is_submitted_again_and_when_retries_run_out_rerun_incomplete_completes(
        project, local_results):
    """The profile's retries: a job SLURM ends (here scancel; in use a memory or time limit) is
    submitted again as its own SLURM job. With `--retries 1`, cancelling that one too fails the
    run; `--rerun-incomplete` then redoes only what was left and ends where a clean run ends."""
    workdir = project / "cancel"
    workdir.mkdir()
    prefix = f"jc{os.getpid()}b"
    command = snakemake_command(*slurm_args(prefix), "--retries", "1")
    output = workdir / "snakemake.out"
    cancelled = []
    with output.open("w") as sink, subprocess.Popen(command, cwd=workdir, stdout=sink,
                                                    stderr=subprocess.STDOUT) as run:
        try:
            # cancel the cbc job (the last level of the DAG) while it runs, then the job
            # submitted again for the same rule and panel
            deadline = time.monotonic() + RUN_TIMEOUT
            while len(cancelled) < 2 and run.poll() is None and time.monotonic() < deadline:
                jobs = slurm_jobs(prefix)
                comment = jobs[cancelled[0]][1] if cancelled else "rule_cbc_"
                victim = next((job_id for job_id, (state, name) in jobs.items()
                               if state == "RUNNING" and name.startswith(comment)
                               and job_id not in cancelled), None)
                if victim:
                    slurm("scancel", victim)
                    cancelled.append(victim)
                time.sleep(0.25)
            assert len(cancelled) == 2, (f"cancelled {cancelled}, not a cbc job and its retry:\n"
                                         f"{output.read_text()[-6000:]}")
            run.wait(timeout=RUN_TIMEOUT)
        finally:
            if run.poll() is None:
                run.kill()
    text = output.read_text()
    first = slurm_jobs(prefix)
    assert [first[job][0] for job in cancelled] == ["CANCELLED", "CANCELLED"], (
        "a cbc job ended before scancel")
    assert first[cancelled[0]][1] == first[cancelled[1]][1]        # the same rule and wildcards
    assert run.returncode != 0
    for victim in cancelled:
        assert f"SLURM-job '{victim}' failed, SLURM status is: 'CANCELLED'" in text
        log = next((workdir / ".snakemake" / "slurm_logs" / "rule_cbc").rglob(f"{victim}.log"))
        assert f"*** JOB {victim} ON" in log.read_text() and "CANCELLED" in log.read_text()
    assert "Error in rule cbc" in text

    # the rerun redoes only what the cancellations left undone, and ends where a clean run ends
    checked(snakemake(workdir, *slurm_args(prefix + "r"), "--rerun-incomplete"))
    rerun = {comment for state, comment in slurm_jobs(prefix + "r").values()}
    assert first[cancelled[0]][1] in rerun
    assert not rerun & {comment for state, comment in first.values() if state == "COMPLETED"}
    assert_same_results(workdir / "results", local_results["until"])
