"""Scale of the foundation: ingest, tensor and CBC on synthetic run tables of 10^6 to 10^8 runs.

A run table (10 languages x 10 backbones x 50 frameworks = 5,000 runs per task, the additive model
of polyjudge.analyses.synthetic) is written to Parquet and to CSV in chunks of tasks, never whole
in memory (not timed). Each (size, format, reader) is then measured in a fresh subprocess, so its
peak memory (ru_maxrss, the high-water mark after each step) is its own. The steps are what the
workflow's ingest and cbc rules do:

* streaming (the workflow's reader): ``ingest`` = read + validate in batches, write the
  validated runs.parquet, sufficient statistics; ``tensor`` = the task-level panel from them;
  ``cbc`` = CBC on the cell means + the two run-level R^2 models from the statistics.
* whole (the reader before streaming, ``--whole``): ``ingest`` = read_table + validate_runs;
  ``tensor`` = build_panel; ``cbc`` = CBC + ols_r_squared on the run rows.

    python benchmarks/foundation_scale.py                  # 10^6 and 10^7, both formats
    python benchmarks/foundation_scale.py 1e8 --formats parquet csv
    python benchmarks/foundation_scale.py 1e7 --whole      # also the whole-table reader
    python benchmarks/foundation_scale.py --keep DIR       # generated tables stay in DIR
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

N_LANGUAGES, N_BACKBONES, N_FRAMEWORKS = 10, 10, 50
PER_TASK = N_LANGUAGES * N_BACKBONES * N_FRAMEWORKS
CHUNK_TASKS = 200  # 10^6 runs per written chunk


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_tables(n_runs: int, workdir: Path, formats) -> dict:
    """Write the run table in chunks of tasks; returns {format: path}."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    from polyjudge.cbc.estimator import double_center

    n_tasks = n_runs // PER_TASK
    paths = {fmt: workdir / f"runs_{n_runs}.{fmt}" for fmt in formats}
    rng = np.random.default_rng(1)
    alpha = rng.normal(0, 5, N_BACKBONES)
    beta = double_center(rng.normal(0, 8, (N_LANGUAGES, N_BACKBONES)))
    names = {"language": [f"lang{i:02d}" for i in range(N_LANGUAGES)],
             "backbone": [f"judge{i:02d}" for i in range(N_BACKBONES)],
             "framework": [f"fw{i:02d}" for i in range(N_FRAMEWORKS)]}
    grid = np.indices((N_LANGUAGES, N_BACKBONES, N_FRAMEWORKS)).reshape(3, -1).astype(np.int32)
    schema = pa.schema([(c, pa.string()) for c in ("task", "language", "backbone", "framework")]
                       + [("score", pa.float64())])
    writers = {}
    if "parquet" in paths:
        writers["parquet"] = pq.ParquetWriter(paths["parquet"], schema)
    if "csv" in paths:
        writers["csv"] = pacsv.CSVWriter(paths["csv"], schema,
                                         write_options=pacsv.WriteOptions(quoting_style="none"))
    for first in range(0, n_tasks, CHUNK_TASKS):
        k = min(CHUNK_TASKS, n_tasks - first)
        mu = rng.normal(0, 10, (k, 1, 1, 1))
        gamma = rng.normal(0, 4, (k, N_LANGUAGES, 1, 1))
        noise = rng.normal(0, 10, (k, N_LANGUAGES, N_BACKBONES, N_FRAMEWORKS))
        score = np.clip(50 + mu + gamma + alpha[:, None] + beta[..., None] + noise, 0, 100)
        tasks = pa.array([f"t{first + i:07d}" for i in range(k)])
        columns = {"task": pa.DictionaryArray.from_arrays(
            np.repeat(np.arange(k, dtype=np.int32), PER_TASK), tasks)}
        for axis, codes in zip(("language", "backbone", "framework"), grid):
            columns[axis] = pa.DictionaryArray.from_arrays(np.tile(codes, k),
                                                           pa.array(names[axis]))
        columns["score"] = pa.array(np.round(score, 2).ravel())
        table = pa.table(columns).cast(schema)
        for writer in writers.values():
            writer.write_table(table)
    for writer in writers.values():
        writer.close()
    return {fmt: str(path) for fmt, path in paths.items()}


def streamed_panel_and_cbc(stats, step):
    """The timed steps after a streamed ingest: the panel from the sufficient statistics
    (``tensor``), then CBC and the run-level R^2 from them (``cbc``); returns (panel, R^2)."""
    import numpy as np

    from polyjudge.cbc import estimator

    start = time.perf_counter()
    panel = stats.panel()
    step("tensor", start)
    start = time.perf_counter()
    result = estimator.fit_cbc(panel)
    model = stats.model_stats()
    r2 = (estimator.r_squared_from_stats(**model, full=False),
          estimator.r_squared_from_stats(**model, full=True))
    step("cbc", start)
    assert np.isfinite(result.beta).all() and 0 < r2[0] <= r2[1] <= 1
    return panel, r2


def measure(path: str, whole: bool, workdir: Path) -> dict:
    """Time and peak memory of each step on one table (run in its own process)."""
    import numpy as np

    from polyjudge.cbc import estimator
    from polyjudge.data import io, streaming

    timings, peaks = {}, {}

    def step(name, start):
        timings[name] = time.perf_counter() - start
        peaks[name] = peak_mb()

    start = time.perf_counter()
    if whole:
        runs = io.validate_runs(io.read_table(path), path)
        n_runs = len(runs)
        step("ingest", start)
        start = time.perf_counter()
        panel = io.build_panel(runs, path)
        step("tensor", start)
        start = time.perf_counter()
        result = estimator.fit_cbc(panel)
        r2 = (estimator.ols_r_squared(runs, estimator.TWO_WAY_TERMS),
              estimator.ols_r_squared(runs, estimator.FULL_TERMS))
        step("cbc", start)
        assert np.isfinite(result.beta).all() and 0 < r2[0] <= r2[1] <= 1
    else:
        stats = streaming.scan_file(path, runs_out=workdir / "validated.parquet")
        n_runs = stats.n_runs
        step("ingest", start)
        panel, r2 = streamed_panel_and_cbc(stats, step)
    return {"n_runs": n_runs, "n_tasks": panel.shape[0], "seconds": timings, "peak_mb": peaks,
            "r2": r2, "file_mb": os.path.getsize(path) / 2**20}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=float, default=[1e6, 1e7])
    parser.add_argument("--formats", nargs="+", default=["parquet", "csv"])
    parser.add_argument("--whole", action="store_true", help="also the whole-table reader")
    parser.add_argument("--keep", help="write the tables here and keep them")
    args = parser.parse_args(argv)
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cpus, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'runs':>12} {'format':>7} {'reader':>9} {'step':>7} {'s':>8} {'runs/s':>11} "
          f"{'peak MB':>8}")
    with tempfile.TemporaryDirectory(dir=args.keep) as tmp:
        workdir = Path(args.keep or tmp)
        for size in (int(s) for s in args.sizes):
            start = time.perf_counter()
            out = subprocess.run([sys.executable, __file__, "--write", str(size), str(workdir),
                                  *args.formats], capture_output=True, text=True, check=True)
            paths = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"# wrote {size:,} runs in {time.perf_counter() - start:.0f} s")
            for fmt in args.formats:
                for whole in ([False, True] if args.whole else [False]):
                    out = subprocess.run([sys.executable, __file__, "--one", paths[fmt],
                                          str(int(whole)), str(workdir)],
                                         capture_output=True, text=True)
                    if out.returncode:
                        print(f"{size:>12,} {fmt:>7} {'whole' if whole else 'streaming':>9} "
                              f"failed: {out.stderr.strip().splitlines()[-1]}")
                        continue
                    r = json.loads(out.stdout.strip().splitlines()[-1])
                    reader = "whole" if whole else "streaming"
                    for name, seconds in r["seconds"].items():
                        print(f"{r['n_runs']:>12,} {fmt:>7} {reader:>9} {name:>7} "
                              f"{seconds:>8.2f} {r['n_runs'] / seconds:>11,.0f} "
                              f"{r['peak_mb'][name]:>8.0f}")
                    total = sum(r["seconds"].values())
                    print(f"{r['n_runs']:>12,} {fmt:>7} {reader:>9} {'total':>7} {total:>8.2f} "
                          f"{r['n_runs'] / total:>11,.0f} {max(r['peak_mb'].values()):>8.0f}"
                          f"   (file {r['file_mb']:,.0f} MB, R^2 {r['r2'][0]:.6f} / "
                          f"{r['r2'][1]:.6f})", flush=True)
            for path in paths.values():
                if not args.keep:
                    Path(path).unlink()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--write":
        print(json.dumps(write_tables(int(sys.argv[2]), Path(sys.argv[3]), sys.argv[4:])))
    elif len(sys.argv) > 1 and sys.argv[1] == "--one":
        print(json.dumps(measure(sys.argv[2], bool(int(sys.argv[3])), Path(sys.argv[4]))))
    else:
        main()
