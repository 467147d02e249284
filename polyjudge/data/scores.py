"""Scores of a run table: the score range, the checks every score passes and their messages.

:func:`polyjudge.data.io.validate_runs` and the streamed checks (:mod:`polyjudge.data.streaming`)
run the same checks, so a table read whole or in batches fails with the same words.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import column_names
from .errors import InputError, say


SCORE_CHECKS = ("non_numeric", "infinite", "outside", "nan")


def check_score_range(score_range, where) -> None:
    """A score range is ``[low, high]`` with low < high (or None): a reversed one would reject
    every score, so it stops before any file is read, naming ``where`` it was set."""
    if score_range is None:
        return
    try:
        low, high = (float(x) for x in score_range)
    except (TypeError, ValueError):
        raise InputError(where, f"score_range {score_range!r} is not two numbers",
                         "score_range: [low, high], e.g. [0, 100], or null for no bound")
    if not low < high:
        fix = (f"[{score_range[1]}, {score_range[0]}]" if low > high
               else "[low, high] with low < high")
        raise InputError(where, f"score_range {list(score_range)} has low >= high",
                         f"score_range: [low, high] with low < high ({fix}), or null for no "
                         "bound")


def score_masks(raw: pd.Series, score_range) -> tuple[pd.Series, dict]:
    """Numeric scores and the row masks of :data:`SCORE_CHECKS` (reported in that order)."""
    score = pd.to_numeric(raw, errors="coerce")
    masks = {"non_numeric": score.isna() & raw.notna(), "infinite": np.isinf(score)}
    if score_range is not None:
        masks["outside"] = (score < score_range[0]) | (score > score_range[1])
    masks["nan"] = score.isna()
    return score, masks


def score_error(source, check: str, n: int, rows, score_range,
                mapping: dict | None = None) -> InputError:
    """The error of a failed score check (``nan`` only when missing scores are not omitted);
    ``mapping``: the user's columns, to name the score column as the user does."""
    if check == "non_numeric":
        return column_names.non_numeric_error(source, n, rows, score_range, mapping)
    rows = column_names.user_rows(rows, mapping)  # under the file's own column names
    where = column_names.in_column("score", mapping)  # a renamed score column, by its name
    if check == "infinite":
        return InputError(source, f"{n} infinite score(s){where}", "finite scores", rows,
                          n_rows=n)
    if check == "outside":
        # [0, 100] as the user wrote it, not [0.0, 100.0] (the console script's floats)
        low, high = (int(float(x)) if float(x).is_integer() else x for x in score_range)
        return InputError(source, f"{n} score(s) outside [{low}, {high}]{where}",
                          f"scores in [{low}, {high}] ({say('score_range')})", rows,
                          n_rows=n)
    return InputError(source, f"{n} missing (NaN) score(s){where}",
                      f"a score in every row, or {say('missing omit')} to leave them out of "
                      "the means", rows, n_rows=n)


def all_missing_error(source, n: int, mapping: dict | None = None) -> InputError:
    where = column_names.in_column("score", mapping)
    return InputError(source, f"all {n} scores{where} are missing",
                      f"at least one score{where}")


def unscored_error(source, axis: str, labels: list, mapping: dict | None = None) -> InputError:
    """Labels of ``axis`` (a standard name) whose every score is missing, named by the user's
    columns (``mapping``)."""
    column = column_names.column(axis, mapping)
    return InputError(source, f"{axis}(s) {labels}{column_names.in_column(axis, mapping)} have "
                      f"runs but every score{column_names.in_column('score', mapping)} is "
                      "missing", f"at least one score for every {axis} (with "
                      f"{say('missing omit')}, the missing scores of the others are left out), "
                      f"or remove the rows whose '{column}' is one of them")
