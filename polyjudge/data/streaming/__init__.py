"""Streaming ingest: a run table of any length in bounded memory.

One step per module: ``batches`` reads the file in batches, ``checks`` checks each batch,
``stats`` reduces it to sufficient statistics, ``scanner`` drives the pass.

The file is read in batches (CSV: pandas' chunked C reader with the options of
:func:`polyjudge.data.io.read_table`, so cells parse exactly as there; Parquet: pyarrow's
``ParquetFile.iter_batches``). Each batch is checked row by row with the checks of
:func:`polyjudge.data.io.validate_runs`, its identifiers are mapped to integer codes (one growing
dictionary per axis) and its scores are added to per-cell sufficient statistics:

* ``n[t, l, b]`` runs and ``sum[t, l, b]`` of scores: the task-level tensor (framework means),
  summed in file order, so the cell values are bit-identical to
  :func:`polyjudge.data.io.build_panel`;
* ``n[t, l, f]``, ``n[l, b, f]``, the per-framework sums and the sum of squares: the R^2 of
  the run-level models (:func:`polyjudge.cbc.estimator.r_squared_from_stats`);
* a one-byte counter per (task, language, backbone, framework) key: duplicate runs.

Memory is that of these arrays (about the tensor's size, plus one byte per possible run), not
of the rows. Errors are the ones :func:`polyjudge.data.io.validate_runs` and
:func:`polyjudge.data.io.build_panel` raise, reported after the pass in the same order, with the
same counts and the same first five offending rows (file row numbers). Duplicate keys are found
by the counters; a second pass over the file collects their rows, only when there are some.
The validated runs can be written on the way (``runs_out``, Parquet, one row group per batch).
"""
from .batches import BATCH_ROWS, iter_table
from .scanner import RunScanner, scan_file, scan_runs
from .stats import RunStats

__all__ = ["BATCH_ROWS", "iter_table", "RunScanner", "RunStats", "scan_runs", "scan_file"]
