"""A validated run table (the workflow's ``runs.parquet``) as a dense score array, in batches.

The analyses that need every run (the CMI strata, the ANOVA with replication) hold one score
per run by nature; reading the table into pandas first would hold each row's labels as Python
strings too (about 30x the array). Here the identifier columns are read as dictionaries, batch by
batch, each batch's labels mapped to axis codes once, and the scores written straight into the
array: memory is the array (8 bytes per possible run), two one-byte flags per run and one batch.
"""
from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq

from .batches import BATCH_ROWS


def _labels(column) -> tuple[list[str], np.ndarray]:
    """The (stripped) dictionary labels and the row codes of a dictionary-encoded column."""
    column = column.combine_chunks() if hasattr(column, "combine_chunks") else column
    if not hasattr(column, "dictionary"):
        column = column.dictionary_encode()
    labels = [str(v).strip() for v in column.dictionary.to_pylist()]
    return labels, column.indices.to_numpy(zero_copy_only=False)


def first_appearance(path, axes) -> dict[str, list[str]]:
    """Labels of each identifier column ``axes`` of a Parquet run table, in first-appearance
    order."""
    handle = pq.ParquetFile(path, read_dictionary=list(axes))
    found = {axis: {} for axis in axes}
    for batch in handle.iter_batches(batch_size=BATCH_ROWS, columns=list(axes)):
        for axis, column in zip(axes, batch.columns):
            labels, codes = _labels(column)
            for code in dict.fromkeys(codes.tolist()):   # first appearance within the batch
                found[axis].setdefault(labels[code], None)
    return {axis: list(labels) for axis, labels in found.items()}


def dense_scores(path, orders: dict[str, tuple[str, ...]]) -> tuple[np.ndarray, dict]:
    """``values`` of shape ``[len(order) for order in orders.values()]``: the score of each run,
    NaN where no run; and ``{"missing", "duplicated", "unknown", "present"}``: counts of absent
    keys, of keys with several runs (the last one is kept), ``{axis: labels}`` outside
    ``orders``, and the boolean array of the keys that have a run.
    """
    axes = list(orders)
    shape = tuple(len(orders[a]) for a in axes)
    lookup = {axis: {label: i for i, label in enumerate(orders[axis])} for axis in axes}
    values = np.full(shape, np.nan).reshape(-1)
    seen = np.zeros(values.size, dtype=bool)
    duplicated = np.zeros(values.size, dtype=bool)
    unknown = {axis: set() for axis in axes}
    handle = pq.ParquetFile(path, read_dictionary=axes)
    for batch in handle.iter_batches(batch_size=BATCH_ROWS, columns=axes + ["score"]):
        codes = []
        for axis, column in zip(axes, batch.columns):
            labels, rows = _labels(column)
            mapped = np.array([lookup[axis].get(label, -1) for label in labels] + [-1])
            unknown[axis].update(label for label, code in zip(labels, mapped) if code < 0)
            codes.append(mapped[rows])
        known = np.logical_and.reduce([c >= 0 for c in codes])
        flat = np.ravel_multi_index([c[known] for c in codes], shape)
        score = batch.columns[-1].to_numpy(zero_copy_only=False).astype(float)[known]
        order = np.argsort(flat, kind="stable")
        repeated = np.zeros(flat.size, dtype=bool)
        repeated[order[1:]] = flat[order[1:]] == flat[order[:-1]]   # within the batch
        duplicated[flat[repeated | seen[flat]]] = True
        seen[flat] = True
        values[flat] = score
    counts = {"missing": int(values.size - seen.sum()), "duplicated": int(duplicated.sum()),
              "unknown": {axis: sorted(labels) for axis, labels in unknown.items() if labels},
              "present": seen.reshape(shape)}  # a run is there (its score may be NaN)
    return values.reshape(shape), counts
