"""The one error type of bad user input, shared by every reader of the package, and the words
its messages use for the user's settings, which depend on where the user gave them."""
from __future__ import annotations

import contextlib
import contextvars
import difflib
import functools
import os

import numpy as np
import pandas as pd

INTERFACES = ("api", "workflow", "cli")
FILE_ROWS = "offending rows (file row numbers, header = row 1)"
_INTERFACE = contextvars.ContextVar("polyjudge_interface", default=None)
# how a message names a setting: in the Python API (keyword arguments of the function called:
# the public functions set it), the workflow (keys of the panel's config: also the default of
# the inner readers) and the console script (flags)
WORDS = {
    "columns": ("the column arguments (task=, language=, backbone=, score=, framework=)",
                "the panel's `columns` mapping",
                "the flags --task, --language, --backbone, --score, --framework"),
    "column example": ("score='pct'", "columns: {score: pct}", "--score pct"),
    "column fix": ("{}='{}'", "columns: {{{}: {}}}", "--{} {}"),
    "framework column": ("framework='{}'", "columns: {{framework: {}}}", "--framework {}"),
    "missing omit": ("missing='omit'", "`missing: omit` in the panel config", "--missing omit"),
    "score_range": ("the score_range argument", "the panel's score_range", "--score-range"),
    "languages": ("the languages argument", "the panel's `languages`", "--languages"),
    "backbones": ("the backbones argument", "the panel's `backbones`", "--backbones"),
    "estimator": ("the estimator argument", "the panel's `estimator` setting", "--estimator"),
    "verdict_threshold": ("the verdict_threshold argument", "the panel's `verdict_threshold`",
                          "the panel's `verdict_threshold`"),
    "verdict_threshold example": ("verdict_threshold={}", "verdict_threshold: {}",
                                  "verdict_threshold: {}"),
    "path_fields": ("path_fields='{}'", "`path_fields: {}` in the source",
                    "--path-fields {}"),
    "paths": ("relative to the working directory", "relative to data_dir",
              "relative to the working directory"),
    "rows": ("offending rows (the DataFrame's index)", FILE_ROWS, FILE_ROWS),
    "table": ("the DataFrame passed in", "the file", "the file"),
}


def _current() -> str | None:
    """The interface set by :func:`messages_for`, else the one a rule script's process set
    (``POLYJUDGE_MESSAGES``, :func:`polyjudge.scripting.run_step`), else None (the workflow's
    words: the inner readers are the workflow's)."""
    return _INTERFACE.get() or os.environ.get("POLYJUDGE_MESSAGES") or None


def say(term: str, *values) -> str:
    """The words for setting ``term`` where the user is (:func:`messages_for`); ``values`` fill the
    ``{}`` of a template such as ``"framework column"``."""
    text = WORDS[term][INTERFACES.index(_current() or "workflow")]
    return text.format(*values) if values else text


def did_you_mean(word, choices) -> str | None:
    """The nearest of ``choices`` to a misspelt ``word`` (difflib, ratio 0.6), or None."""
    near = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return near[0] if near else None


@contextlib.contextmanager
def messages_for(interface: str, keep: bool = False):
    """Word the messages raised inside for ``interface``: the Python API, the workflow or the
    console script (the workflow's rule scripts and ``polyjudge`` set theirs; the public
    functions set "api" with ``keep``, which leaves an interface already set, so a command's
    messages stay its own)."""
    if interface not in INTERFACES:
        raise ValueError(f"interface must be one of {INTERFACES}, got {interface!r}")
    token = _INTERFACE.set(_current() or interface if keep else interface)
    try:
        yield
    finally:
        _INTERFACE.reset(token)


def reads_files() -> bool:
    """Row numbers in messages are file rows (workflow, console script), not a DataFrame's
    index."""
    return _current() != "api"


def api_messages(function):
    """Decorator of a public function taking a DataFrame: its messages use the function's
    argument names and the DataFrame's index (unless a command or rule called it)."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        with messages_for("api", keep=True):
            return function(*args, **kwargs)
    return wrapper


class InputError(ValueError):
    """Bad user input: names the file, what is wrong (with example rows) and what was expected."""

    def __init__(self, source, problem: str, expected: str, rows: pd.DataFrame | None = None,
                 rows_caption: str | None = None, n_rows: int | None = None):
        message = f"{source}: {problem}\n  expected: {expected}"
        rows_caption = rows_caption or say("rows")
        if rows is not None and len(rows):
            labelled = rows.attrs.get("rows_caption") not in (None, FILE_ROWS)  # file:line
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


def file_rows(frame: pd.DataFrame, mask, columns=None) -> pd.DataFrame:
    """Rows under ``mask`` indexed by their line in the file (header is line 1); a table read
    from many files (:mod:`polyjudge.data.sources`) names them ``file:line``; a DataFrame given
    to the Python API (:func:`messages_for` ``"api"``) by its own index. ``columns``: the ones
    to show, the user's own (not a framework column the reader added); default all."""
    bad = frame.loc[np.asarray(mask, dtype=bool)]
    if columns is not None:
        bad = bad[[c for c in bad.columns if c in set(columns)]]
    locate = frame.attrs.get("row_labels")
    if locate is None:  # a DataFrame given to the API keeps its own index
        return bad.set_axis(bad.index + 2, axis=0) if reads_files() else bad
    labels = locate(bad.index)
    bad = bad.set_axis(list(labels), axis=0)
    bad.attrs["rows_caption"] = getattr(labels, "caption", None) or frame.attrs.get("rows_caption")
    return bad
