"""Reading and validating judge runs, and building the task-level panel.

Everything a user hands the workflow passes through here. Problems are reported as
:class:`InputError`: the file, the offending rows or values, and what was expected, raised
before any output is written. Inner numerical code trusts what leaves this module.

Standard tables (column names after renaming):

* run table: task, language, backbone, framework, score[, stratum] (no framework column: one
  run per cell, framework "single")
* requirement table: task, language, backbone, framework, requirement_id, category, satisfied
  [, response_status]
"""
from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
import pandas as pd

from . import column_names
from .checksums import verify as verify_checksum
from .errors import InputError, file_rows, reads_files, say
from .formats import is_spreadsheet, spreadsheet_error
from .panel import Panel
# check_score_range is also reached here (the config's checks); the other names io uses itself
from .scores import (  # noqa: F401
                    all_missing_error, check_score_range, score_error, score_masks, unscored_error)
from .shape import empty_pairs_error, unbalanced_error

RUN_KEYS = ["task", "language", "backbone", "framework"]
RUN_COLUMNS = RUN_KEYS + ["score"]
REQUIREMENT_COLUMNS = RUN_KEYS + ["requirement_id", "category", "satisfied"]
MISSING_POLICIES = ("error", "omit")


def natural_key(label: str):
    """Sort key that orders '2' before '10' and '01_x' before '02_y' (then '007' < '07' < '7')."""
    parts = [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", str(label))]
    return parts, str(label)


# Identifier columns (standard names): always text, exactly as written ("007" stays "007").
IDENTIFIERS = ("task", "item", "language", "backbone", "framework", "requirement_id", "category",
               "stratum", "subset", "response_status")
# Cells read as missing in the other (numeric) columns of a CSV; identifiers only treat an empty
# cell as missing, so a language "NA" or a task "null" stays a label.
MISSING_TOKENS = ["", "NA", "N/A", "n/a", "NaN", "nan", "-nan", "null", "NULL", "None", "#N/A"]
DELIMITERS = (",", "\t", ";", "|")


def _csv_header(path: Path) -> tuple[list[str], str]:
    """Column names (stripped) and delimiter of a CSV, from its first line."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            first = handle.readline()
    except UnicodeDecodeError as error:
        raise InputError(path, f"is not UTF-8 text ({error.reason} at byte {error.start})",
                         "a UTF-8 encoded CSV file (save it as UTF-8)")
    if not first.strip():
        raise InputError(path, "is empty: no header line", "a header line naming the columns, "
                         "then one row per record")
    delimiter = max(DELIMITERS, key=first.count)  # ties go to the comma
    names = next(csv.reader([first], delimiter=delimiter))
    return [name.strip() for name in names], delimiter


def input_file(path, mapping: dict | None = None) -> tuple[Path, dict]:
    """An input table's path, checked to exist and against its checksum manifest, and the
    renaming of its columns (file name -> standard name) from ``mapping`` (standard -> file)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "file not found",
                         f"an existing CSV or Parquet file ({say('paths')})")
    if is_spreadsheet(path):
        raise spreadsheet_error(path)
    verify_checksum(path)
    return path, renaming(mapping)


def read_table(path, columns: list[str] | None = None, mapping: dict | None = None,
               text: tuple[str, ...] = IDENTIFIERS) -> pd.DataFrame:
    """Read a CSV or Parquet table with standard column names, checking ``columns`` are present.

    ``mapping`` renames the file's columns (standard name -> name in the file). Identifier columns
    (``text``, standard names) are read as text exactly as written, surrounding spaces stripped;
    other columns keep their types (CSV: inferred, with :data:`MISSING_TOKENS` as missing).
    Column names are stripped; a UTF-8 byte-order mark, CRLF line ends and a ``;``, tab or ``|``
    delimiter (detected from the header) are read as such.
    """
    path, rename = input_file(path, mapping)
    try:
        if path.suffix == ".parquet":
            frame = pd.read_parquet(path)
            frame.columns = [str(c).strip() for c in frame.columns]
            column_names.check_unique(path, list(frame.columns), rename)
            frame = frame.rename(columns=rename)
        else:
            frame = pd.read_csv(path, **csv_options(path, rename, text, str), low_memory=False)
    except InputError:
        raise
    except Exception as error:  # the reader's own message says what went wrong in the file
        raise InputError(path, f"cannot be read as a table ({error})", "a CSV or Parquet table")
    for name in (c for c in text if c in frame.columns):
        missing = frame[name].isna()
        frame[name] = frame[name].astype(str).str.strip().where(~missing)
    if columns:
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise column_names.missing_columns_error(path, missing, frame.columns, columns,
                                                     mapping or {})
    return frame


def csv_options(path: Path, rename: dict, text, label_dtype) -> dict:
    """``pandas.read_csv`` options of a run table: the header's delimiter and stripped names
    (renamed to standard names), identifiers (``text``) as ``label_dtype`` with only an empty
    cell missing, :data:`MISSING_TOKENS` as missing elsewhere. Shared by :func:`read_table` and
    the streaming reader (:mod:`polyjudge.data.streaming`), so both read a file the same way."""
    names, delimiter = _csv_header(path)
    column_names.check_unique(path, names, rename)
    standard = [rename.get(name, name) for name in names]
    return dict(sep=delimiter, encoding="utf-8-sig", header=0, names=standard,
                dtype={i: label_dtype for i, name in enumerate(standard) if name in text},
                keep_default_na=False,
                na_values={name: MISSING_TOKENS for name in standard if name not in text},
                skipinitialspace=True)


def read_panel(path) -> Panel:
    """The task-level tensor a workflow step wrote (``results/{panel}/tensor.parquet``)."""
    return Panel.from_frame(read_table(path, ["task", "language", "backbone", "score"]))


def rename_columns(frame: pd.DataFrame, mapping: dict | None) -> pd.DataFrame:
    """Rename a DataFrame's columns to the standard names; ``mapping``: standard -> user name.

    (Files are renamed as they are read: :func:`read_table`'s ``mapping``.)"""
    return frame.rename(columns=renaming(mapping)) if mapping else frame


def renaming(mapping: dict | None) -> dict:
    """``DataFrame.rename`` columns for a panel's ``columns`` (standard name -> user name)."""
    return {user: std for std, user in (mapping or {}).items() if user != std}


def as_labels(series: pd.Series) -> pd.Series:
    """Labels as a categorical with string categories (cheap on millions of rows)."""
    labels = series.astype("category")
    if not all(isinstance(c, str) for c in labels.cat.categories):
        labels = labels.cat.rename_categories([str(c) for c in labels.cat.categories])
    return labels


def no_rows_error(source, what: str) -> InputError:
    return InputError(source, f"has a header but no rows: no {what}",
                      f"one row per {what[:-1] if what.endswith('s') else what} below the header")


def missing_columns_error(source, absent: list[str], columns, keys: list[str],
                          mapping: dict | None = None) -> InputError:
    """Run-table columns ``absent`` (``mapping``: the user's, to name them as they are in the
    file: :mod:`polyjudge.data.column_names`); the framework is optional (none: one run per
    cell), so it is not listed as needed."""
    needed = [key for key in keys if key != "framework"] + ["score"]
    return column_names.missing_columns_error(source, absent, columns, needed, mapping)


def empty_labels(labels: pd.Series) -> np.ndarray:
    """Rows whose label is missing or blank."""
    labels = as_labels(labels)
    blank = np.flatnonzero(labels.cat.categories.str.strip() == "")
    return (labels.cat.codes.isin(blank) | (labels.cat.codes < 0)).to_numpy()


UNSCORED_AXES = ("language", "backbone")
"""Axes on which a label whose every score is missing stops the run (it would silently vanish)."""


def _check_rows(frame: pd.DataFrame, source, what: str) -> None:
    if frame.empty:
        raise no_rows_error(source, what)


def _check_keys(frame: pd.DataFrame, keys: list[str], source, own=None,
                mapping: dict | None = None) -> None:
    """Keys must be present (not NaN / blank) and unique; ``own``: the table's own columns,
    the ones the offending rows show (default all), under the user's names (``mapping``)."""
    for key in keys:
        empty = empty_labels(frame[key])
        if empty.any():
            raise column_names.empty_key_error(source, key, int(empty.sum()),
                                               file_rows(frame, empty, own), mapping)
    duplicated = frame.duplicated(keys, keep=False)
    if duplicated.any():
        raise column_names.duplicate_error(source, keys, int(duplicated.sum()),
                                           file_rows(frame, duplicated, own), mapping)


def validate_runs(frame: pd.DataFrame, source, score_range=(0.0, 100.0),
                  missing: str = "error", keys: list[str] = RUN_KEYS,
                  mapping: dict | None = None) -> pd.DataFrame:
    """Check a run table (standard column names) and return it typed and clean.

    Scores must be numeric and inside ``score_range`` (None for no bound). NaN scores stop the
    run unless ``missing == "omit"``, in which case those rows are dropped (the panel setting
    for omitted scores; never a silent default). ``mapping``: the user's column names (standard
    -> user) the table was renamed from, which messages name.
    """
    if missing not in MISSING_POLICIES:
        raise InputError(source, f"unknown missing-score policy {missing!r}",
                         f"one of {MISSING_POLICIES}")
    check_score_range(score_range, source)
    own = list(frame.columns)  # the user's: messages list and show these, not an added framework
    frame = with_single_framework(frame)
    absent = [c for c in keys + ["score"] if c not in frame.columns]
    if absent:
        raise missing_columns_error(source, absent, own, keys, mapping)
    if reads_files():  # rows are named by file row (a DataFrame given to the API: its index)
        frame = frame.reset_index(drop=True)
    _check_rows(frame, source, "runs")
    _check_keys(frame, keys, source, own, mapping)
    score, masks = score_masks(frame["score"], score_range)
    for check, mask in masks.items():
        if mask.any() and (check != "nan" or missing == "error"):
            raise score_error(source, check, int(mask.sum()), file_rows(frame, mask, own),
                              score_range, mapping)
    nan = masks["nan"]
    out = frame.assign(score=score.astype(float)).loc[~nan]
    if out.empty:
        raise all_missing_error(source, len(frame), mapping)
    for key in keys:
        out[key] = as_labels(out[key]).cat.remove_unused_categories()
    for axis in (a for a in UNSCORED_AXES if a in keys):
        present = as_labels(frame[axis]).cat.remove_unused_categories()  # not a filtered-out one
        unscored = sorted(set(present.cat.categories) - set(out[axis].cat.categories),
                          key=natural_key)
        if unscored:
            raise unscored_error(source, axis, unscored, mapping)
    columns = keys + ["score"] + (["stratum"] if "stratum" in out.columns else [])
    return out[columns].reset_index(drop=True)


def with_single_framework(frame: pd.DataFrame) -> pd.DataFrame:
    """A table without a framework column is one run per cell: framework "single"."""
    return frame if "framework" in frame.columns else frame.assign(framework="single")


def runs_from_requirements(requirements: pd.DataFrame, source,
                           mapping: dict | None = None) -> pd.DataFrame:
    """Run scores ``100 x satisfied / requirements`` from requirement-level verdicts;
    ``mapping``: the user's column names (standard -> user), which messages name."""
    own = list(requirements.columns)  # the rows shown in messages: not an added framework
    requirements = with_single_framework(requirements)
    absent = [c for c in REQUIREMENT_COLUMNS if c not in requirements.columns]
    if absent:
        needed = [c for c in REQUIREMENT_COLUMNS if c != "framework"]
        raise InputError(source, f"missing column(s) {column_names.listed(absent, mapping)}",
                         f"columns {column_names.listed(needed, mapping)}")
    requirements = requirements.reset_index(drop=True)
    _check_rows(requirements, source, "requirement verdicts")
    _check_keys(requirements, RUN_KEYS + ["requirement_id"], source, own, mapping)
    words = requirements["satisfied"].astype(str).str.strip().str.lower()
    satisfied = pd.to_numeric(requirements["satisfied"].where(~words.isin(["true", "false"]),
                                                              words.eq("true").astype(int)),
                              errors="coerce")
    bad = ~satisfied.isin([0, 1])
    if bad.any():
        raise InputError(source, f"{int(bad.sum())} value(s) of "
                         f"{column_names.named('satisfied', mapping)} are not 0/1",
                         f"'{column_names.column('satisfied', mapping)}' in {{0, 1}} (or "
                         "true/false)", column_names.user_rows(file_rows(requirements, bad, own),
                                                               mapping))
    grouped = requirements.assign(satisfied=satisfied).groupby(RUN_KEYS, sort=False)["satisfied"]
    runs = grouped.agg(n_requirements="size", n_satisfied="sum").reset_index()
    runs["score"] = 100.0 * runs["n_satisfied"] / runs["n_requirements"]
    return runs


def check_runs_agree(runs: pd.DataFrame, recomputed: pd.DataFrame, source, atol=1e-9,
                     mapping: dict | None = None) -> None:
    """The given run table and the one recomputed from requirements must agree (the runs that
    do not shown under the user's column names, ``mapping``)."""
    merged = runs.merge(recomputed[RUN_KEYS + ["score"]], on=RUN_KEYS, how="outer",
                        suffixes=("", "_requirements"), indicator=True)
    unmatched = merged["_merge"] != "both"
    differs = ~unmatched & ~np.isclose(merged["score"], merged["score_requirements"], atol=atol)
    if unmatched.any() or differs.any():
        bad = merged.loc[unmatched | differs, RUN_KEYS + ["score", "score_requirements", "_merge"]]
        raise InputError(source, f"{len(bad)} run(s) disagree with the requirement table",
                         "each run's score = 100 x satisfied / requirements of its verdicts",
                         column_names.user_rows(bad.set_axis(range(1, len(bad) + 1)), mapping),
                         rows_caption="disagreeing runs")


def order_labels(present, wanted, axis: str, source, mapping: dict | None = None
                 ) -> tuple[str, ...]:
    """Axis order: the configured order if given (must match the data), else natural sort;
    ``mapping``: the user's columns, which messages name."""
    present = list(present)
    if not wanted:
        return tuple(sorted(present, key=natural_key))
    wanted = [str(w) for w in wanted]
    unknown = sorted(set(present) - set(wanted))
    absent = [w for w in wanted if w not in set(present)]
    if absent:
        raise InputError(source, f"{axis}(s) {absent} are configured but have no runs"
                         f"{column_names.in_column(axis, mapping)}",
                         f"runs for every configured {axis}, or remove them from "
                         f"{say(axis + 's')}")
    if unknown:
        raise InputError(source, f"{axis}(s) {unknown}{column_names.in_column(axis, mapping)} "
                         f"have runs but are not in the configured order {wanted}",
                         f"every {axis} listed in {say(axis + 's')}")
    return tuple(wanted)


def build_panel(runs: pd.DataFrame, source, languages=None, backbones=None,
                allow_missing_cells: bool = False, mapping: dict | None = None) -> Panel:
    """Average runs over frameworks into the task-level panel ``T[t, l, b]``.

    A balanced panel has every task x language x backbone cell. Missing cells stop the run
    (naming them) unless ``allow_missing_cells`` (a panel whose individual scores are omitted).
    ``mapping``: the user's column names, which messages name.
    """
    tasks = order_labels(runs["task"].unique(), None, "task", source, mapping)
    langs = order_labels(runs["language"].unique(), languages, "language", source, mapping)
    bbs = order_labels(runs["backbone"].unique(), backbones, "backbone", source, mapping)
    t = pd.Categorical(runs["task"], categories=tasks).codes
    l = pd.Categorical(runs["language"], categories=langs).codes
    b = pd.Categorical(runs["backbone"], categories=bbs).codes
    shape = (len(tasks), len(langs), len(bbs))
    flat = np.ravel_multi_index((t, l, b), shape)
    size = int(np.prod(shape))
    n_runs = np.bincount(flat, minlength=size).reshape(shape)
    total = np.bincount(flat, weights=runs["score"].to_numpy(float), minlength=size)

    def strata():
        if "stratum" not in runs.columns:
            return None
        per_task = runs.groupby("task")["stratum"].nunique()
        mixed = per_task[per_task > 1]
        if len(mixed):
            raise mixed_strata_error(source, list(mixed.index[:5]), mapping)
        first = runs.drop_duplicates("task").set_index("task")["stratum"].astype(str)
        return tuple(first.loc[list(tasks)].tolist())

    return panel_from_sums(n_runs, total.reshape(shape), (tasks, langs, bbs), source,
                           allow_missing_cells, strata, mapping)


def mixed_strata_error(source, tasks: list, mapping: dict | None = None) -> InputError:
    return InputError(source, f"task(s) {tasks}{column_names.in_column('task', mapping)} have "
                      "several strata", "one stratum per task")


def panel_from_sums(n_runs: np.ndarray, total: np.ndarray, labels, source,
                    allow_missing_cells: bool = False, strata=lambda: None,
                    mapping: dict | None = None) -> Panel:
    """The panel of per-cell run counts and score sums ``(tasks, languages, backbones)``.

    Cell value = sum / count; empty cells stop the run unless ``allow_missing_cells``.
    ``strata()`` gives the tasks' strata (or None), checked after the balance. Shared by
    :func:`build_panel` and the streaming ingest (:mod:`polyjudge.data.streaming`);
    ``mapping``: the user's column names, under which the missing cells are shown.
    """
    tasks, langs, bbs = labels
    shape, size = n_runs.shape, n_runs.size
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(n_runs > 0, total / np.maximum(n_runs, 1), np.nan)
    empty = np.flatnonzero(n_runs == 0)
    observed_pairs = (n_runs > 0).any(axis=0)  # a pair without any task: `omit` cannot help
    if len(empty) and not allow_missing_cells and not observed_pairs.all():
        raise empty_pairs_error(source, observed_pairs, langs, bbs)
    if len(empty) and not allow_missing_cells:
        it, il, ib = np.unravel_index(empty, shape)
        cells = pd.DataFrame({"task": np.asarray(tasks)[it], "language": np.asarray(langs)[il],
                              "backbone": np.asarray(bbs)[ib]})
        raise unbalanced_error(source, cells, size, mapping)
    return Panel(values, tuple(tasks), tuple(langs), tuple(bbs), strata=strata(),
                 n_runs=n_runs)


def load_preference_margins(files: dict, source_dir, columns: dict | None = None) -> pd.DataFrame:
    """Run table from per-evaluator preference files (M-RewardBench layout).

    ``files`` maps evaluator (backbone) name -> file; each file has item, subset, language,
    chosen and rejected scores. score = margin = chosen - rejected; items are tasks, the subset
    is the stratum, and there is a single "framework". Rows whose chosen or rejected score is
    missing keep a NaN margin (the panel's ``missing`` policy decides).
    """
    names = {"item": "item_numeric_id", "subset": "subset", "language": "language",
             "chosen": "chosen_score", "rejected": "rejected_score", **(columns or {})}
    frames = []
    for evaluator, relative in files.items():
        path = Path(source_dir) / relative
        frame = read_table(path, list(names.values()),
                           text=(names["item"], names["subset"], names["language"]))
        _check_rows(frame, path, "items")
        chosen = pd.to_numeric(frame[names["chosen"]], errors="coerce")
        rejected = pd.to_numeric(frame[names["rejected"]], errors="coerce")
        bad = (chosen.isna() & frame[names["chosen"]].notna()) | \
              (rejected.isna() & frame[names["rejected"]].notna())
        if bad.any():
            raise InputError(path, "non-numeric chosen/rejected score(s)", "numbers or empty",
                             file_rows(frame, bad))
        frames.append(pd.DataFrame({
            "task": frame[names["item"]].astype(str),
            "language": frame[names["language"]].astype(str),
            "backbone": str(evaluator), "framework": "single", "score": chosen - rejected,
            "stratum": frame[names["subset"]].astype(str)}))
    return pd.concat(frames, ignore_index=True)
