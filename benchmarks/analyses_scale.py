"""Every default analysis of a judge-runs panel at 10^5, 10^6 and 10^7 runs: time, peak memory
and declared mem_mb of each rule (docs/performance.md, "Every analysis at scale").

A synthetic judge_runs panel (12 languages x 10 backbones x 20 repeats = 2,400 runs per task, the
additive model with noise, scores on a 0-100 grid of step 10 as judge scores with 10
requirements are) is written to Parquet in chunks of tasks, then the whole workflow runs on it
from an empty results/ with ``snakemake --cores 2`` (the repository's Snakefile, a config with
this one panel and the analyses of ``ANALYSES``; the simulation study, which does not read the
panel, is left out). Each rule's seconds and peak memory come from
its benchmark file (``max_rss``), its declared ``mem_mb`` from the snakemake log.

    python benchmarks/analyses_scale.py                    # 1e5 1e6 1e7
    python benchmarks/analyses_scale.py 1e5 --keep DIR     # the work directories stay in DIR
    python benchmarks/analyses_scale.py 1e6 --json out.json
    python benchmarks/analyses_scale.py 1e7 --permutations 16   # CMI null: 16 draws, not 500
    python benchmarks/analyses_scale.py --report DIR/runs_100000 DIR/runs_1000000  # tabulate

The largest panel an analysis handles in 24 GB is extrapolated from the two largest panels run:
peak = a + b * runs fitted through them, solved for 24,000 MB (memory is linear in the runs by
design; docs/performance.md gives the constants).
"""
import argparse
import csv
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
N_LANGUAGES, N_BACKBONES, N_REPEATS = 12, 10, 20
PER_TASK = N_LANGUAGES * N_BACKBONES * N_REPEATS
CHUNK_TASKS = 400
ANALYSES = ["cbc", "bands", "heldout", "decisions", "reversal", "information", "task_count",
            "backbone_subsets", "lolo", "missing", "diagnostics"]
MACHINE_MB = 24_000


def write_runs(n_tasks: int, path: Path) -> None:
    """The run table, written in chunks of tasks (never whole in memory)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from polyjudge.cbc.estimator import double_center

    rng = np.random.default_rng(29)
    alpha = rng.normal(0, 5, N_BACKBONES)
    beta = double_center(rng.normal(0, 8, (N_LANGUAGES, N_BACKBONES)))
    names = {"language": [f"lang{i:02d}" for i in range(N_LANGUAGES)],
             "backbone": [f"judge{i:02d}" for i in range(N_BACKBONES)],
             "framework": [f"rep{i:02d}" for i in range(N_REPEATS)]}
    grid = np.indices((N_LANGUAGES, N_BACKBONES, N_REPEATS)).reshape(3, -1).astype(np.int32)
    schema = pa.schema([(c, pa.string()) for c in ("task", "language", "backbone", "framework")]
                       + [("score", pa.float64())])
    with pq.ParquetWriter(path, schema) as writer:
        for first in range(0, n_tasks, CHUNK_TASKS):
            k = min(CHUNK_TASKS, n_tasks - first)
            mu = rng.normal(0, 10, (k, 1, 1, 1))
            gamma = rng.normal(0, 4, (k, N_LANGUAGES, 1, 1))
            noise = rng.normal(0, 15, (k, N_LANGUAGES, N_BACKBONES, N_REPEATS))
            latent = 50 + mu + gamma + alpha[:, None] + beta[..., None] + noise
            score = 10.0 * np.clip(np.round(latent / 10), 0, 10)
            columns = {"task": pa.DictionaryArray.from_arrays(
                np.repeat(np.arange(k, dtype=np.int32), PER_TASK),
                pa.array([f"t{first + i:06d}" for i in range(k)]))}
            for axis, codes in zip(("language", "backbone", "framework"), grid):
                columns[axis] = pa.DictionaryArray.from_arrays(np.tile(codes, k),
                                                               pa.array(names[axis]))
            columns["score"] = pa.array(score.ravel())
            writer.write_table(pa.table(columns).cast(schema))


def declared_resources(log: Path) -> dict:
    """benchmark file -> {"rule", "mem_mb", "runtime"} declared, from a snakemake log's job
    blocks."""
    declared, job = {}, {}
    for line in log.read_text().splitlines():
        line = line.strip()
        if match := re.match(r"(?:local)?rule (\w+):$", line):
            job = {"rule": match.group(1)}
        elif line.startswith("benchmark:"):
            job["benchmark"] = line.split(":", 1)[1].strip()
        elif line.startswith("resources:") and "benchmark" in job:
            values = dict(re.findall(r"\b(mem_mb|runtime)=(\d+)", line))
            declared[job["benchmark"]] = {"rule": job["rule"],
                                          **{k: int(v) for k, v in values.items()}}
    return declared


def measured(results: Path, log: Path) -> list[dict]:
    """Every benchmark file under ``results``, with its job's declared mem_mb and runtime."""
    declared = declared_resources(log)
    jobs = []
    for path in sorted(results.rglob("benchmarks/*.tsv")):
        with open(path) as handle:
            row = next(csv.DictReader(handle, delimiter="\t"))
        job = declared.get(str(path.relative_to(results.parent)), {})
        jobs.append({"job": path.stem, "benchmark": str(path.relative_to(results.parent)),
                     "rule": job.get("rule", path.stem), "seconds": float(row["s"]),
                     "cpu_seconds": float(row["cpu_time"]), "max_rss_mb": float(row["max_rss"]),
                     "mem_mb": job.get("mem_mb"), "runtime": job.get("runtime")})
    return jobs


def run_panel(n_runs: int, workdir: Path, cores: int, permutations: int | None = None) -> dict:
    n_tasks = max(2, round(n_runs / PER_TASK))
    data = workdir / "data"
    data.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    write_runs(n_tasks, data / "runs.parquet")
    written = time.perf_counter() - start
    config = {"data_dir": str(data), "panels": {"scale": {
        "kind": "judge_runs", "runs": "runs.parquet", "score_range": [0, 100],
        "analyses": ANALYSES}}}
    if permutations:  # fewer CMI permutations: same memory (chunked), less time
        config["information"] = {"permutations": permutations}
    (workdir / "config.yaml").write_text(json.dumps(config))
    command = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"),
               "--directory", str(workdir), "--configfile", str(workdir / "config.yaml"),
               "--cores", str(cores), "--omit-from", "simulation_scenario"]
    load_before = Path("/proc/loadavg").read_text().split()[0]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=workdir, capture_output=True, text=True)
    wall = time.perf_counter() - start
    load_after = Path("/proc/loadavg").read_text().split()[0]
    if done.returncode:
        sys.exit(f"snakemake failed at {n_runs} runs:\n{done.stderr[-4000:]}")
    logs = sorted((workdir / ".snakemake" / "log").glob("*.snakemake.log"))
    rules = [job for job in measured(workdir / "results", logs[-1])
             if job["benchmark"].startswith("results/scale/")]
    return {"n_runs": n_tasks * PER_TASK, "n_tasks": n_tasks, "write_seconds": written,
            "wall_seconds": wall, "load": [load_before, load_after], "jobs": rules}


def report_on(workdir: Path) -> dict:
    """The measurements of a finished work directory, each job's declaration re-evaluated with
    the current rules on its inputs (a dry run, ``--forceall``)."""
    command = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"),
               "--directory", str(workdir), "--configfile", str(workdir / "config.yaml"),
               "--cores", "2", "--omit-from", "simulation_scenario", "--dry-run", "--forceall",
               "--nolock"]
    done = subprocess.run(command, cwd=workdir, capture_output=True, text=True, check=True)
    (workdir / "dry_run.txt").write_text(done.stdout + done.stderr)
    jobs = [job for job in measured(workdir / "results", workdir / "dry_run.txt")
            if job["benchmark"].startswith("results/scale/")]
    n_runs = pq_rows(workdir / "results" / "scale" / "runs.parquet")
    return {"n_runs": n_runs, "n_tasks": n_runs // PER_TASK, "jobs": jobs}


def pq_rows(path: Path) -> int:
    import pyarrow.parquet as pq
    return pq.read_metadata(path).num_rows


def largest_panels(results: list[dict]) -> dict:
    """Per rule: runs at which its peak (linear through the two largest panels) reaches 24 GB."""
    if len(results) < 2:
        return {}
    small, large = sorted(results, key=lambda r: r["n_runs"])[-2:]

    def peaks(result):
        out = {}
        for job in result["jobs"]:
            out[job["rule"]] = max(out.get(job["rule"], 0), job["max_rss_mb"])
        return out

    low, high = peaks(small), peaks(large)
    limits = {}
    for rule in high:
        slope = (high[rule] - low.get(rule, high[rule])) / (large["n_runs"] - small["n_runs"])
        limits[rule] = (large["n_runs"] + (MACHINE_MB - high[rule]) / slope
                        if slope > 0 else float("inf"))
    return limits


def table(results: list[dict]) -> str:
    limits = largest_panels(results)
    lines = ["| rule | " + " | ".join(f"{r['n_runs']:,} runs: s / max MB / declared MB"
                                      for r in results) + " | largest panel in 24 GB |",
             "|---|" + "---|" * (len(results) + 1)]
    rules = sorted({job["rule"] for r in results for job in r["jobs"]})
    for rule in rules:
        cells = []
        for result in results:
            jobs = [j for j in result["jobs"] if j["rule"] == rule]
            if not jobs:
                cells.append("")
                continue
            worst = max(jobs, key=lambda j: j["max_rss_mb"])
            seconds = max(j["seconds"] for j in jobs)
            declared = "?" if worst["mem_mb"] is None else f"{worst['mem_mb']:,}"
            cells.append(f"{seconds:.1f} / {worst['max_rss_mb']:,.0f} / {declared}"
                         + (f" (x{len(jobs)})" if len(jobs) > 1 else ""))
        limit = limits.get(rule)
        cells.append("" if limit is None else "no limit" if limit == float("inf")
                     else f"{limit:.2g} runs")
        lines.append(f"| {rule} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=float, default=[1e5, 1e6, 1e7])
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--permutations", type=int,
                        help="CMI permutations (default: the config's 500); memory does not "
                             "depend on them, a shard's time is linear in them")
    parser.add_argument("--keep", type=Path, help="keep the work directories here")
    parser.add_argument("--json", type=Path, help="write the measurements here")
    parser.add_argument("--report", type=Path, nargs="+",
                        help="only tabulate these finished work directories (declarations "
                             "re-evaluated with the current rules)")
    args = parser.parse_args()
    if args.report:
        print(table([report_on(path) for path in args.report]))
        return
    results = []
    with tempfile.TemporaryDirectory(prefix="analyses_scale_") as tmp:
        root = args.keep or Path(tmp)
        for size in args.sizes:
            result = run_panel(int(size), root / f"runs_{int(size)}", args.cores,
                               args.permutations)
            over = [j["job"] for j in result["jobs"]
                    if j["mem_mb"] is not None and j["max_rss_mb"] > j["mem_mb"]]
            print(f"{result['n_runs']:,} runs ({result['n_tasks']} tasks): workflow "
                  f"{result['wall_seconds']:.0f} s wall, load {result['load'][0]} -> "
                  f"{result['load'][1]}; above their declaration: {over or 'none'}", flush=True)
            results.append(result)
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
