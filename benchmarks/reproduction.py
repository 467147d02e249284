"""Wall time of the full reproduction from an empty ``results/``, and of a no-op rerun.

Copies the repository's tracked files into a fresh directory (a temporary one, or ``--workdir``)
and runs ``snakemake --cores N`` there twice: from empty, then again with nothing to do. Prints
both wall times, the CPU time of the first run, the load average of the machine before and after
(timings on a shared machine are only comparable at a similar load), and the slowest jobs, from
the job start / finish stamps of the snakemake log (1 s resolution) and, for the rules that
write one, the benchmark file's seconds.

    python benchmarks/reproduction.py [--cores 2] [--workdir DIR] [--top 10] \\
        [--config data_dir=/abs/path/to/data ...]

``--config`` settings are passed on to snakemake; a relative ``data_dir`` in the config is
resolved against this repository (so the copy reads the same data).
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
START = re.compile(r"^(?:local)?rule (\w+):$")
JOBID = re.compile(r"^\s+jobid: (\d+)$")
WILDCARDS = re.compile(r"^\s+wildcards: (.*)$")
BENCHMARK = re.compile(r"^\s+benchmark: (.*)$")
FINISH = re.compile(r"^Finished jobid: (\d+) \(Rule: (\w+)\)$")


def copy_repository(target: Path) -> None:
    """The tracked files of the repository (as a clean clone has them), without results."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True,
                           text=True).stdout.split("\0")
    for name in filter(None, files):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def job_times(log_text: str) -> list[dict]:
    """One record per finished job of a snakemake log: rule, wildcards, start, seconds."""
    stamp, started, jobs = None, {}, []
    current = None
    for line in log_text.splitlines():
        if match := STAMP.match(line):
            stamp = datetime.strptime(match.group(1), "%a %b %d %H:%M:%S %Y")
        elif match := START.match(line):
            current = {"rule": match.group(1), "wildcards": "", "benchmark": None,
                       "start": stamp}
        elif current is not None and (match := JOBID.match(line)):
            started[match.group(1)] = current
        elif current is not None and (match := WILDCARDS.match(line)):
            current["wildcards"] = match.group(1)
        elif current is not None and (match := BENCHMARK.match(line)):
            current["benchmark"] = match.group(1)
        elif match := FINISH.match(line):
            job = started.pop(match.group(1), None)
            if job is not None and job["start"] is not None:
                jobs.append(dict(job, seconds=(stamp - job["start"]).total_seconds()))
    return jobs


def benchmark_seconds(path: Path) -> float | None:
    """The seconds of a rule's benchmark file (its first repeat), if it has one."""
    lines = path.read_text().splitlines() if path.is_file() else []
    return float(lines[1].split("\t")[0]) if len(lines) > 1 else None


def run(workdir: Path, cores: int, config: list[str]) -> tuple[float, float, str]:
    """Run snakemake in ``workdir``; returns wall seconds, CPU seconds and the log text."""
    command = [sys.executable, "-m", "snakemake", "--cores", str(cores)]
    if config:
        command += ["--config", *config]
    env = dict(os.environ, PYTHONPATH=str(workdir))  # polyjudge from the copy
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise SystemExit(f"snakemake failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, cpu, result.stdout + result.stderr


def resolve_config(config: list[str]) -> list[str]:
    """Pass ``--config`` on, with the data directory absolute (default: the repository's)."""
    settings = dict(item.split("=", 1) for item in config)
    if "data_dir" not in settings:
        with open(REPO / "config" / "config.yaml") as handle:
            settings["data_dir"] = yaml.safe_load(handle)["data_dir"]
    settings["data_dir"] = str((REPO / settings["data_dir"]).resolve())
    return [f"{key}={value}" for key, value in settings.items()]


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--workdir", type=Path,
                        help="run here (must not exist or be empty); default: a temporary copy")
    parser.add_argument("--top", type=int, default=10, help="how many of the slowest jobs")
    parser.add_argument("--config", nargs="*", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    config = resolve_config(args.config)
    with tempfile.TemporaryDirectory(prefix="polyjudge-reproduction-") as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        if any(workdir.iterdir()):
            raise SystemExit(f"{workdir} is not empty")
        copy_repository(workdir)
        print(f"repository {REPO} (commit {git_commit()}) copied to {workdir}")
        print(f"cores {args.cores}, config {' '.join(config)}, CPUs on this machine "
              f"{os.cpu_count()}")
        print(f"load average before: {load()}")
        wall, cpu, _ = run(workdir, args.cores, config)
        log_text = max((workdir / ".snakemake" / "log").glob("*.snakemake.log")).read_text()
        jobs = job_times(log_text)
        print(f"full reproduction from empty: {wall:.1f} s wall, {cpu:.1f} s CPU, "
              f"{len(jobs)} jobs (load average after: {load()})")
        noop_wall, _, noop_log = run(workdir, args.cores, config)
        nothing = "Nothing to be done" in noop_log
        print(f"no-op rerun: {noop_wall:.1f} s wall"
              + ("" if nothing else " (WARNING: snakemake found jobs to run)"))
        print(f"\nslowest {args.top} jobs (start to finish in the snakemake log; benchmark file "
              "seconds where the rule writes one):")
        for job in sorted(jobs, key=lambda job: -job["seconds"])[:args.top]:
            seconds = job["benchmark"] and benchmark_seconds(workdir / job["benchmark"])
            note = f"  (benchmark {seconds:.2f} s)" if seconds is not None else ""
            print(f"  {job['seconds']:5.0f} s  {job['rule']:24s} {job['wildcards']}{note}")
        total = sum(job["seconds"] for job in jobs)
        print(f"\njob-seconds in total: {total:.0f} (sum over jobs of start to finish)")


def git_commit() -> str:
    result = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                            capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True,
                           text=True).stdout.strip()
    return result.stdout.strip() + ("+uncommitted changes" if dirty else "")


if __name__ == "__main__":
    main()
