"""The one error type of bad user input, shared by every reader of the package."""
from __future__ import annotations

import numpy as np
import pandas as pd


class InputError(ValueError):
    """Bad user input: names the file, what is wrong (with example rows) and what was expected."""

    def __init__(self, source, problem: str, expected: str, rows: pd.DataFrame | None = None,
                 rows_caption: str = "offending rows (file row numbers, header = row 1)",
                 n_rows: int | None = None):
        message = f"{source}: {problem}\n  expected: {expected}"
        if rows is not None and len(rows):
            labelled = bool(rows.attrs.get("rows_caption"))  # rows named file:line
            rows_caption = rows.attrs.get("rows_caption") or rows_caption
            n_rows = len(rows) if n_rows is None else n_rows  # a streamed table: its first rows
            if labelled:  # long cells cut, file:line labels whole
                shown = rows.head(5).map(lambda v: v if not isinstance(v, str) or len(v) <= 40
                                         else v[:37] + "...").to_string()
            else:
                shown = rows.head(5).to_string(max_colwidth=40)
            more = f"\n  ... and {n_rows - 5} more" if n_rows > 5 else ""
            message += f"\n  {rows_caption}:\n    " + shown.replace("\n", "\n    ") + more
        super().__init__(message)


def file_rows(frame: pd.DataFrame, mask) -> pd.DataFrame:
    """Rows under ``mask`` indexed by their line in the file (header is line 1); a table read
    from many files (:mod:`judgecal.data.sources`) names them ``file:line``."""
    bad = frame.loc[np.asarray(mask, dtype=bool)]
    locate = frame.attrs.get("row_labels")
    if locate is None:
        return bad.set_axis(bad.index + 2, axis=0)
    labels = locate(bad.index)
    bad = bad.set_axis(list(labels), axis=0)
    bad.attrs["rows_caption"] = getattr(labels, "caption", None) or frame.attrs.get("rows_caption")
    return bad
