"""Scale of table sources: 10^7 runs in 1,000 JSON Lines files with nested fields, streamed.

The runs (10 languages x 10 backbones x 50 frameworks per task, the additive model of
benchmarks/foundation_scale.py) are written to ``judges/{backbone}/{language}/part-{k}.jsonl``
(records ``{"sample": {"id", "epoch"}, "result": {"score", "tokens"}, "note"}``: backbone and
language come from the path, task, framework and score from nested fields) and, row for row in
the same order, to one CSV (not timed; in a temporary folder, deleted afterwards). Each is then
read in a fresh subprocess, so its peak memory (``ru_maxrss`` after each step) is its own, by the
workflow's streaming ingest:

* ``ingest``: :func:`polyjudge.data.sources.scan_source` (the JSON Lines tree with its template)
  or :func:`polyjudge.data.streaming.scan_file` (the CSV): read + check in batches, write the
  validated runs.parquet, sufficient statistics;
* ``tensor``: the task-level panel from them; ``cbc``: CBC + the run-level R^2 models.

The two tensors are compared (bit-identical: the same runs summed in the same order).

    python benchmarks/sources_scale.py                 # 10^7 runs, 1,000 files
    python benchmarks/sources_scale.py 1e6 --parts 1   # 10^6 runs, 100 files
    python benchmarks/sources_scale.py --keep DIR      # the generated files stay in DIR
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from foundation_scale import peak_mb, streamed_panel_and_cbc  # beside this script

N_LANGUAGES, N_BACKBONES, N_FRAMEWORKS = 10, 10, 50
TEMPLATE = "judges/{backbone}/{language}/part-{part}.jsonl"
COLUMNS = {"task": "sample.id", "framework": "sample.epoch", "score": "result.score"}


def scores(n_tasks: int):
    """Scores (task, language, backbone, framework) of the additive model, multiples of 1/4."""
    import numpy as np
    rng = np.random.default_rng(1)
    alpha = rng.normal(0, 5, N_BACKBONES)
    beta = rng.normal(0, 8, (N_LANGUAGES, N_BACKBONES))
    beta -= beta.mean(0) + beta.mean(1, keepdims=True) - beta.mean()
    mu = rng.normal(0, 10, (n_tasks, 1, 1, 1))
    gamma = rng.normal(0, 4, (n_tasks, N_LANGUAGES, 1, 1))
    noise = rng.normal(0, 10, (n_tasks, N_LANGUAGES, N_BACKBONES, N_FRAMEWORKS))
    value = np.clip(50 + mu + gamma + alpha[:, None] + beta[..., None] + noise, 0, 100)
    return np.round(value * 4) / 4


def write_file(args) -> int:
    """One JSON Lines file: every framework of tasks ``first .. first + n - 1`` of one cell."""
    path, score, first = args  # score: (tasks, frameworks)
    tasks = [f"t{first + i:07d}" for i in range(score.shape[0])]
    frameworks = [f"fw{f:02d}" for f in range(N_FRAMEWORKS)]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        handle.write("".join(
            f'{{"sample":{{"id":"{task}","epoch":"{fw}"}},"result":{{"score":{s!r},'
            f'"tokens":[12,7]}},"note":"ok"}}\n'
            for task, row in zip(tasks, score.tolist()) for fw, s in zip(frameworks, row)))
    return score.size


def write_sources(n_runs: int, parts: int, workdir: Path) -> dict:
    """The JSON Lines tree and the one CSV, row for row in the order the tree is read."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pacsv

    n_tasks = n_runs // (N_LANGUAGES * N_BACKBONES * N_FRAMEWORKS)
    per_part = n_tasks // parts
    value = scores(n_tasks)
    jobs, cells = [], []
    for b in range(N_BACKBONES):
        for l in range(N_LANGUAGES):
            for k in range(parts):
                path = workdir / TEMPLATE.format(backbone=f"judge{b:02d}",
                                                 language=f"lang{l:02d}", part=f"{k:03d}")
                first = k * per_part
                jobs.append((path, value[first:first + per_part, l, b, :], first))
                cells.append((b, l))
    with ProcessPoolExecutor(os.cpu_count()) as pool:
        written = sum(pool.map(write_file, jobs, chunksize=8))
    csv_path = workdir / "runs.csv"
    schema = pa.schema([(c, pa.string()) for c in ("task", "language", "backbone", "framework")]
                       + [("score", pa.float64())])
    fw = np.array([f"fw{f:02d}" for f in range(N_FRAMEWORKS)])
    with pacsv.CSVWriter(csv_path, schema,
                         write_options=pacsv.WriteOptions(quoting_style="none")) as writer:
        # the order the source reads its files in: sorted paths
        for (path, score, first), (b, l) in sorted(zip(jobs, cells), key=lambda j: str(j[0][0])):
            n = score.shape[0]
            writer.write_table(pa.table({
                "task": np.repeat([f"t{first + i:07d}" for i in range(n)], N_FRAMEWORKS),
                "language": np.full(score.size, f"lang{l:02d}"),
                "backbone": np.full(score.size, f"judge{b:02d}"),
                "framework": np.tile(fw, n), "score": score.ravel()}, schema=schema))
    return {"n_runs": written, "files": len(jobs), "csv": str(csv_path),
            "jsonl_mb": sum(p.stat().st_size for p in (workdir / "judges").rglob("*.jsonl"))
            / 2**20, "csv_mb": csv_path.stat().st_size / 2**20}


def measure(kind: str, workdir: Path) -> dict:
    """Time and peak memory of each step on one source (run in its own process)."""
    import numpy as np

    from polyjudge.data import sources, streaming

    timings, peaks = {}, {}

    def step(name, start):
        timings[name] = time.perf_counter() - start
        peaks[name] = peak_mb()

    start = time.perf_counter()
    out = workdir / f"validated_{kind}.parquet"
    if kind == "jsonl":
        source = {"template": TEMPLATE}
        files = sources.source_inputs(source, workdir)
        stats = sources.scan_source(source, files, COLUMNS, runs_out=out)
    else:
        stats = streaming.scan_file(workdir / "runs.csv", runs_out=out)
    step("ingest", start)
    panel, r2 = streamed_panel_and_cbc(stats, step)
    np.save(workdir / f"tensor_{kind}.npy", panel.values)
    out.unlink()
    return {"n_runs": stats.n_runs, "seconds": timings, "peak_mb": peaks, "r2": r2}


def main(argv=None):
    import numpy as np

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("size", nargs="?", type=float, default=1e7)
    parser.add_argument("--parts", type=int, default=10, help="files per language x backbone")
    parser.add_argument("--keep", help="write the files here and keep them")
    args = parser.parse_args(argv)
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cpus, "
          f"load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(dir=args.keep) as tmp:
        workdir = Path(args.keep or tmp)
        start = time.perf_counter()
        out = subprocess.run([sys.executable, __file__, "--write", str(int(args.size)),
                              str(args.parts), str(workdir)], capture_output=True, text=True)
        if out.returncode:
            raise SystemExit(out.stderr)
        written = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"# wrote {written['n_runs']:,} runs in {written['files']:,} JSON Lines files "
              f"({written['jsonl_mb']:,.0f} MB) and one CSV ({written['csv_mb']:,.0f} MB) in "
              f"{time.perf_counter() - start:.0f} s")
        print(f"{'runs':>12} {'source':>22} {'step':>7} {'s':>8} {'runs/s':>11} {'peak MB':>8}")
        for kind, label in (("jsonl", f"{written['files']} JSONL files"), ("csv", "one CSV")):
            out = subprocess.run([sys.executable, __file__, "--one", kind, str(workdir)],
                                 capture_output=True, text=True)
            if out.returncode:
                print(f"{label}: failed: {out.stderr.strip()[-2000:]}")
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            for name, seconds in r["seconds"].items():
                print(f"{r['n_runs']:>12,} {label:>22} {name:>7} {seconds:>8.2f} "
                      f"{r['n_runs'] / seconds:>11,.0f} {r['peak_mb'][name]:>8.0f}")
            total = sum(r["seconds"].values())
            print(f"{r['n_runs']:>12,} {label:>22} {'total':>7} {total:>8.2f} "
                  f"{r['n_runs'] / total:>11,.0f} {max(r['peak_mb'].values()):>8.0f}   "
                  f"(R^2 {r['r2'][0]:.6f} / {r['r2'][1]:.6f})", flush=True)
        tensors = [workdir / f"tensor_{kind}.npy" for kind in ("jsonl", "csv")]
        if all(p.exists() for p in tensors):
            same = np.array_equal(*(np.load(p) for p in tensors))
            print(f"# tensors bit-identical: {same}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--write":
        print(json.dumps(write_sources(int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]))))
    elif len(sys.argv) > 1 and sys.argv[1] == "--one":
        print(json.dumps(measure(sys.argv[2], Path(sys.argv[3]))))
    else:
        main()
