"""Time and peak memory of the bootstrap analyses on a large panel, chunked and in one piece.

A synthetic panel of 2,000 tasks x 30 languages x 20 backbones (``polyjudge.analyses.synthetic``)
goes through the held-out evaluation (every method but Dawid-Skene, which needs run tables; add
``--dawid-skene`` for the run-level one), the decision agreement and the simultaneous band, each
with 1,000 replicates: once with the default chunking (``polyjudge.cbc.bootstrap.MEMORY_BUDGET``
per chunk) and once with all replicates in one chunk. Peak memory is that of the arrays the step
allocates (``tracemalloc``, which numpy reports to), so the steps can share one process; the
results of both runs are checked to be identical.

    python benchmarks/bootstrap_scale.py [--tasks 2000 --languages 30 --backbones 20]
        [--replicates 1000] [--chunked-only] [--dawid-skene]
"""
from __future__ import annotations

import argparse
import os
import time
import tracemalloc

from polyjudge.analyses.heldout import METHODS, decision_agreement, heldout_replicates
from polyjudge.analyses.synthetic import simulate_panel
from polyjudge.cbc.band import bootstrap_band
from polyjudge.cbc.bootstrap import MEMORY_BUDGET, replicate_chunk
from polyjudge.data.io import build_panel


def measure(step):
    """Wall seconds, peak traced MB and the result of ``step()``."""
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    start = time.perf_counter()
    result = step()
    seconds = time.perf_counter() - start
    return seconds, (tracemalloc.get_traced_memory()[1] - base) / 2 ** 20, result


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--languages", type=int, default=30)
    parser.add_argument("--backbones", type=int, default=20)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--chunked-only", action="store_true",
                        help="skip the one-chunk runs (to show the chunked peak at many "
                             "replicates)")
    parser.add_argument("--dawid-skene", action="store_true",
                        help="include run-level Dawid-Skene (2 frameworks; slow at this size)")
    args = parser.parse_args(argv)
    n, k, m, R = args.tasks, args.languages, args.backbones, args.replicates
    frameworks = 2 if args.dawid_skene else 1
    draw = simulate_panel(1, n_tasks=n, n_languages=k, n_backbones=m, n_frameworks=frameworks,
                          clip=True)
    panel = build_panel(draw.runs, "benchmark")
    runs = draw.runs if args.dawid_skene else None
    methods = [name for name in METHODS
               if name != "Dawid-Skene (requirement)"
               and (args.dawid_skene or not name.startswith("Dawid"))]
    print(f"panel {n} tasks x {k} languages x {m} backbones, {R} replicates; "
          f"{len(methods)} held-out methods; memory budget per chunk "
          f"{MEMORY_BUDGET / 2 ** 20:.0f} MB; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}")
    steps = {
        "heldout tau": lambda chunk: heldout_replicates(panel, methods, R, 7, runs=runs,
                                                        chunk_size=chunk),
        "decisions": lambda chunk: decision_agreement(panel, R, 307, chunk_size=chunk),
        "band": lambda chunk: bootstrap_band(panel, R, 0, chunk_size=chunk),
    }
    # warm up, so that imports and first-call costs are not counted in the first step
    heldout_replicates(panel, methods[:2], 8, 1, chunk_size=8)
    decision_agreement(panel, 8, 1, chunk_size=8)
    tracemalloc.start()
    print(f"{'step':12s} {'chunked s':>10s} {'peak MB':>8s} {'one chunk s':>12s} "
          f"{'peak MB':>8s}  same result")
    for name, step in steps.items():
        chunked = measure(lambda: step(None))
        if args.chunked_only:
            print(f"{name:12s} {chunked[0]:10.1f} {chunked[1]:8.0f}")
            continue
        whole = measure(lambda: step(R))
        same = _equal(chunked[2], whole[2])
        print(f"{name:12s} {chunked[0]:10.1f} {chunked[1]:8.0f} {whole[0]:12.1f} "
              f"{whole[1]:8.0f}  {same}")
    tracemalloc.stop()
    print(f"(replicates per chunk for the held-out step: "
          f"{replicate_chunk(R, 4 * n + k * m * (k + m + 8))})")


def _equal(a, b) -> bool:
    if hasattr(a, "equals"):
        return bool(a.equals(b))
    if hasattr(a, "frame"):
        return bool(a.frame.equals(b.frame) and a.critical_value == b.critical_value)
    return a == b


if __name__ == "__main__":
    main()
