"""Fields from a source's paths (a template's ``{field}`` parts, Hive ``key=value`` folders) and
their agreement with the records' own values of the same field.

A path may name a field that its file's records also hold: upstream AlpacaEval keeps each
annotator's judgments in ``results/<model>/<annotator>/annotations.json`` and writes the
annotator into every record, so a folder copied under the wrong name
(``alpaca_eval_gpt4_turbo_fn/`` holding records whose ``annotator`` is
``alpaca_eval_cot_gpt4_turbo_fn``) would count one judge twice, under two names, if either side
were taken silently. A record holds the field when it has the column (or JSON field) that the
source's columns map to the same standard name, or the same name where none is mapped. The
source's ``path_fields`` says what to do with them (:data:`POLICIES`):

* ``check`` (the default): every record that holds the field must hold the path's value; a file
  where some do not stops the read, naming the file, the field, both values, how many records
  differ and the first of their lines. Records without a value take the path's.
* ``path``: the path's value for every row; the records' own field is not read.
* ``record``: each record's own value; the path's where a record has none.
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from . import column_names
from .errors import InputError, say
from .streaming.codes import stripped_labels
from .streaming.json_batches import record_lines

POLICIES = ("check", "path", "record")
FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
SHOWN = 5  # lines named in a message


def template_fields(template: str, path) -> dict | None:
    """The fields ``template`` gives ``path`` (matched from the end of the path), or None.

    Each ``{name}`` matches one folder or part of a file name (no ``/``; the same name twice
    must match the same text). Written here because pyarrow's partitionings cover only whole
    folder names (``DirectoryPartitioning``) and ``_``-separated file name prefixes
    (``FilenamePartitioning``), not ``{language}.jsonl`` or ``part-{n}.jsonl``.
    """
    pattern, last, seen = [], 0, set()
    for match in FIELD.finditer(template):
        pattern.append(re.escape(template[last:match.start()]))
        name = match.group(1)
        pattern.append(f"(?P={name})" if name in seen else f"(?P<{name}>[^/]+?)")
        seen.add(name)
        last = match.end()
    pattern.append(re.escape(template[last:]))
    found = re.search("(?:^|/)" + "".join(pattern) + "$", Path(path).as_posix())
    return None if found is None else found.groupdict()


def hive_fields(path) -> dict:
    """Fields of the ``key=value`` folders right above ``path``, parsed by pyarrow's Hive
    partitioning (values as text, URL-decoded)."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    folders = []
    for part in reversed(Path(path).parent.parts):
        if "=" not in part:
            break
        folders.insert(0, part)
    names = [part.partition("=")[0] for part in folders]
    if not folders or len(set(names)) < len(names):
        return {}
    partitioning = ds.partitioning(pa.schema([(name, pa.string()) for name in names]),
                                   flavor="hive")
    # parse() reads the folders of a path: the file name keeps the last folder a folder
    found = ds.get_partition_keys(partitioning.parse("/".join(folders) + "/" + Path(path).name))
    return {name: found.get(name) for name in names}  # a null partition: an empty label


def constant(label: str | None, n: int) -> pd.Categorical:
    """``n`` rows of one label (missing where None), as the readers give identifiers."""
    code = np.full(n, -1 if label is None else 0, np.int8)
    return pd.Categorical.from_codes(code, [] if label is None else [label])


class PathFields:
    """The fields one file's path gives, set on each of its batches under the source's
    ``path_fields`` policy (see the module docstring).

    ``values``: standard name -> the path's value; ``in_path``: standard name -> the name the
    path gives it; ``mapping``: the user's columns (standard -> theirs); ``kind``: the file's
    format (csv, parquet, jsonl, json), for how rows are numbered; ``how``: how the source
    takes fields from paths, for the message ("the template '{annotator}/annotations.json'").
    Under ``check``, call :meth:`raise_disagreement` after the file's last batch.
    """

    def __init__(self, path: Path, kind: str, values: dict, in_path: dict, mapping: dict,
                 policy: str = "check", how: str = "its path"):
        self.path, self.kind, self.mapping, self.policy, self.how = (
            Path(path), kind, mapping, policy, how)
        self.labels = {name: None if value is None else str(value).strip()
                       for name, value in values.items()}
        self.in_path = in_path
        self.rows = 0
        self.differ: dict[str, tuple[Counter, list[int], int]] = {}

    def record_fields(self) -> dict:
        """Standard name -> the records' own field to read beside the path's value (none
        under ``path``, which does not read them)."""
        if self.policy == "path":
            return {}
        return {name: self.mapping.get(name, name) for name in self.labels}

    def apply(self, batch: pd.DataFrame) -> pd.DataFrame:
        """``batch`` with each path field set (rows indexed by their number in the file)."""
        self.rows += len(batch)
        for name, label in self.labels.items():
            own = batch.get(name) if self.policy != "path" else None
            if own is not None and not own.notna().any():  # no record holds it (the usual)
                own = None
            if own is None or label is None:  # one side only: the path, or the records
                batch[name] = constant(label, len(batch)) if own is None else stripped_labels(
                    own).array
                continue
            own = stripped_labels(own)
            codes, labels = own.cat.codes.to_numpy(), own.cat.categories
            held = codes >= 0
            differ = held & (codes != labels.get_indexer([label])[0])
            if self.policy == "check" and differ.any():
                self._note(name, own[differ], batch.index[differ])
            if self.policy == "record" and held.any():
                merged = pd.Index(labels).append(pd.Index([label])).unique()
                at = merged.get_loc(label)
                batch[name] = pd.Categorical.from_codes(np.where(held, codes, at), merged)
            else:
                batch[name] = constant(label, len(batch))
        return batch

    @property
    def disagree(self) -> bool:
        return bool(self.differ)

    def _note(self, name: str, values: pd.Series, rows) -> None:
        counts, first, n = self.differ.get(name, (Counter(), [], 0))
        counts.update(values.astype(str).value_counts().to_dict())
        first.extend(int(r) for r in rows[:SHOWN - len(first)])
        self.differ[name] = (counts, first, n + len(values))

    def raise_disagreement(self) -> None:
        """Stop naming every field whose records differ from the path (after the file)."""
        if not self.differ:
            return
        clauses = [self._clause(name, *found) for name, found in self.differ.items()]
        rows = "records" if self.kind in ("json", "jsonl") else "rows"
        raise InputError(
            self.path, "; ".join(clauses),
            f"the same value in the path and in the {rows}: rename the folder or file, or fix "
            f"the {rows}; or say which side to trust: {say('path_fields', 'path')} (the "
            f"path's value for every row) or {say('path_fields', 'record')} (each {rows[:-1]}'s "
            f"own value; the path's where a {rows[:-1]} has none)")

    def _clause(self, name: str, counts: Counter, first: list[int], n: int) -> str:
        shown = [f"'{value}'" + (f" ({count})" if len(counts) > 1 else "")
                 for value, count in counts.most_common(3)]
        if len(counts) > 3:
            shown.append(f"{len(counts) - 3} other value(s)")
        named = self.in_path[name]
        standard = f" (the {name})" if named != name else ""
        own = column_names.column(name, self.mapping)
        field = "field" if self.kind in ("json", "jsonl") else "column"
        rows = "records" if self.kind in ("json", "jsonl") else "rows"
        unit, where = self._where(first)
        more = f" and {n - len(first)} more" if n > len(first) else ""
        return (f"field '{named}'{standard} is '{self.labels[name]}' in its path ({self.how}) "
                f"but {', '.join(shown)} in {field} '{own}' of {n} of its {self.rows} {rows} "
                f"({unit} {', '.join(map(str, where))}{more})")

    def _where(self, rows: list[int]) -> tuple[str, list[int]]:
        """How the message numbers rows of the file: JSON Lines by line, a JSON array by
        record, a table by file row (header = row 1)."""
        if self.kind == "jsonl":
            return "line(s)", record_lines(self.path, rows)
        if self.kind == "json":
            return "record(s)", [r + 1 for r in rows]
        return "row(s)", [r + 2 for r in rows]
