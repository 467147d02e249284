"""Scale of the foundation: ingest, tensor and CBC on synthetic panels of up to 10 million runs.

Each size runs in a fresh subprocess so its peak memory (ru_maxrss) is its own. The panel is
generated and written to Parquet first (not timed); then the timed steps are what the workflow's
ingest, tensor and cbc rules do: read + validate the run table, build the task-level tensor,
fit CBC and the two R^2 models on the run rows.

    python benchmarks/foundation_scale.py            # 1, 2.5, 5, 10 million runs
    python benchmarks/foundation_scale.py 1e6 2e6    # chosen sizes
"""
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SHAPE = dict(n_languages=10, n_backbones=10, n_frameworks=50)  # 5,000 runs per task


def measure(n_runs: int, workdir: Path) -> dict:
    import numpy as np

    from judgecal import estimator, io
    from judgecal.synthetic import simulate_panel

    n_tasks = n_runs // (SHAPE["n_languages"] * SHAPE["n_backbones"] * SHAPE["n_frameworks"])
    path = workdir / f"runs_{n_runs}.parquet"
    simulate_panel(seed=1, n_tasks=n_tasks, **SHAPE).runs.to_parquet(path, index=False)
    timings = {}
    start = time.perf_counter()
    runs = io.validate_runs(io.read_table(path), path)
    timings["ingest"] = time.perf_counter() - start
    start = time.perf_counter()
    panel = io.build_panel(runs, path)
    timings["tensor"] = time.perf_counter() - start
    start = time.perf_counter()
    result = estimator.fit_cbc(panel)
    r2 = (estimator.ols_r_squared(runs, estimator.TWO_WAY_TERMS),
          estimator.ols_r_squared(runs, estimator.FULL_TERMS))
    timings["cbc"] = time.perf_counter() - start
    assert np.isfinite(result.beta).all() and 0 < r2[0] <= r2[1] <= 1
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"n_runs": len(runs), "n_tasks": n_tasks, **timings,
            "total": sum(timings.values()), "peak_mb": peak_mb}


def main(sizes):
    print(f"{'runs':>12} {'tasks':>6} {'ingest s':>9} {'tensor s':>9} {'cbc s':>7} "
          f"{'total s':>8} {'s/M runs':>9} {'peak MB':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            out = subprocess.run([sys.executable, __file__, "--one", str(size), tmp],
                                 capture_output=True, text=True, check=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"{r['n_runs']:>12,} {r['n_tasks']:>6} {r['ingest']:>9.2f} {r['tensor']:>9.2f} "
                  f"{r['cbc']:>7.2f} {r['total']:>8.2f} {r['total'] / r['n_runs'] * 1e6:>9.2f} "
                  f"{r['peak_mb']:>8.0f}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        print(json.dumps(measure(int(float(sys.argv[2])), Path(sys.argv[3]))))
    else:
        main([int(float(s)) for s in sys.argv[1:]] or [1_000_000, 2_500_000, 5_000_000, 10_000_000])
