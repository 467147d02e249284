"""Reading a table in batches: CSV through pandas' chunked C reader with the options of
:func:`polyjudge.data.io.read_table` (so cells parse exactly as there), Parquet through pyarrow's
``ParquetFile.iter_batches``. Identifier columns come out as categoricals of their stripped text.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .. import column_names, io
from ..errors import InputError
from ..io import IDENTIFIERS
from .codes import stripped_labels

BATCH_ROWS = 1 << 19


def iter_table(path, mapping: dict | None = None, text: tuple[str, ...] = IDENTIFIERS,
               batch_rows: int = BATCH_ROWS, parquet: bool | None = None
               ) -> Iterator[pd.DataFrame]:
    """Batches of a CSV or Parquet table, standard column names, as :func:`io.read_table` reads it.

    Each batch is indexed by the data row number (0 = first row under the header). Identifier
    columns are categoricals of their text, stripped, missing = NaN (read_table gives the same
    labels as strings). ``parquet``: the format (default: from the suffix, ``.parquet``).
    """
    path, rename = io.input_file(path, mapping)
    try:
        if path.suffix == ".parquet" if parquet is None else parquet:
            batches = _parquet_batches(path, rename, text, batch_rows)
        else:
            options = io.csv_options(path, rename, text, str)
            batches = _csv_batches(path, options, batch_rows)
        offset = 0
        for batch in batches:
            batch.index = pd.RangeIndex(offset, offset + len(batch))
            offset += len(batch)
            for name in (c for c in text if c in batch.columns):
                batch[name] = stripped_labels(batch[name])
            yield batch
    except InputError:
        raise
    except Exception as error:  # the reader's own message says what went wrong in the file
        raise InputError(path, f"cannot be read as a table ({error})", "a CSV or Parquet table")


def _csv_batches(path: Path, options: dict, batch_rows: int):
    found = False
    with pd.read_csv(path, **options, chunksize=batch_rows) as reader:
        for batch in reader:
            found = True
            yield batch
    if not found:  # a header without rows: one empty batch with the columns
        yield pd.DataFrame({name: pd.Series(dtype=object) for name in options["names"]})


def _parquet_batches(path: Path, rename: dict, text, batch_rows: int):
    file_names = pq.read_schema(path).names
    names = [rename.get(str(c).strip(), str(c).strip()) for c in file_names]
    # identifier columns stored as text are read as dictionaries: each label becomes text once
    handle = pq.ParquetFile(path, read_dictionary=[c for c, name in zip(file_names, names)
                                                  if name in text])
    column_names.check_unique(path, [str(c).strip() for c in file_names], rename)
    found = False
    for batch in handle.iter_batches(batch_size=batch_rows):
        found = True
        columns = {}
        for name, column in zip(names, batch.columns):
            if name in text and not pa.types.is_dictionary(column.type):
                column = column.dictionary_encode()  # only the distinct labels become text
            columns[name] = column.to_pandas()
        yield pd.DataFrame(columns)
    if not found:
        yield handle.schema_arrow.empty_table().rename_columns(names).to_pandas()
