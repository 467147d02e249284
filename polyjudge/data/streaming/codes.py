"""Labels to integer codes: each identifier axis is a dictionary that grows as batches arrive."""
from __future__ import annotations

import numpy as np
import pandas as pd


def stripped_labels(column: pd.Series) -> pd.Series:
    """Labels as text, surrounding spaces stripped (categorical; NaN stays missing)."""
    column = column.astype("category") if column.dtype != "category" else column
    stripped = pd.Index([str(c).strip() for c in column.cat.categories])
    codes = column.cat.codes.to_numpy()
    if stripped.is_unique:
        labels = pd.Index(stripped, dtype=object)
    else:
        remap, labels = pd.factorize(stripped)
        codes = np.where(codes >= 0, remap[np.maximum(codes, 0)], -1)
    return pd.Series(pd.Categorical.from_codes(codes, labels), index=column.index,
                     name=column.name)


class Axis:
    """A growing dictionary label -> integer code (first appearance order)."""

    def __init__(self):
        self.codes: dict[str, int] = {}
        self.labels: list[str] = []

    def encode(self, column: pd.Series) -> np.ndarray:
        """Global codes of a categorical column (-1 where missing). Only the categories some
        row has become labels: a Parquet dictionary or a filtered pandas categorical keeps
        categories no row uses (a language filtered out is not a language of the panel)."""
        categories = column.cat.categories
        local = column.cat.codes.to_numpy()
        used = np.bincount(local[local >= 0], minlength=len(categories)) > 0
        lookup = np.full(len(categories) + 1, -1, dtype=np.int64)
        for i in np.flatnonzero(used):
            label = categories[i]
            code = self.codes.get(label)
            if code is None:
                code = self.codes[label] = len(self.labels)
                self.labels.append(label)
            lookup[i] = code
        return lookup[local]
