"""SHA-256 of a validated run table, the calibrator's record of what it was fitted on.

:func:`training_sha256` hashes a data frame; :func:`training_sha256_file` the same table as a
Parquet file (the workflow's ``runs.parquet``), in batches: the same digest.
"""
from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

from . import io
from .streaming import arrays


def training_sha256(checked: pd.DataFrame) -> str:
    """SHA-256 of a validated standard run table: its columns task, language, backbone,
    framework (as text) and score (shortest round-trip text of the float), rows sorted by the
    four keys (code-point order), written as CSV with ``\\n`` line ends, UTF-8. The same runs give
    the same digest whatever their row order, in the API and in the workflow."""
    frame = pd.DataFrame({key: checked[key].astype(str).to_numpy(dtype=object)
                          for key in io.RUN_KEYS})
    frame["score"] = [repr(float(x)) for x in checked["score"].to_numpy(dtype=float)]
    frame = frame.sort_values(io.RUN_KEYS, kind="stable", ignore_index=True)
    text = frame.to_csv(index=False, lineterminator="\n")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def training_sha256_file(path) -> str:
    """:func:`training_sha256` of a validated Parquet run table (the workflow's ``runs.parquet``),
    read in batches into a score array and hashed a block of tasks at a time: the same digest,
    in memory of 9 bytes per run instead of a sorted data frame and its CSV text."""
    keys = list(io.RUN_KEYS)
    orders = {axis: tuple(sorted(labels))        # code-point order, as sort_values on text
              for axis, labels in arrays.first_appearance(path, keys).items()}
    values, counts = arrays.dense_scores(path, orders)
    present = counts["present"]
    digest = hashlib.sha256()
    per_task = max(1, int(np.prod(values.shape[1:])))
    step = max(1, (1 << 19) // per_task)
    labels = [np.array(orders[axis], dtype=object) for axis in keys]
    for first in range(0, values.shape[0], step):
        index = np.nonzero(present[first:first + step])
        frame = pd.DataFrame({axis: labels[i][index[i] + (first if i == 0 else 0)]
                              for i, axis in enumerate(keys)})
        frame["score"] = [repr(float(x)) for x in values[first:first + step][index]]
        digest.update(frame.to_csv(index=False, header=first == 0,
                                   lineterminator="\n").encode("utf-8"))
    return digest.hexdigest()
