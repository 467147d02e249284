"""The user's own column names in messages about a run table.

Tables are checked under the standard names (task, language, backbone, framework, score) after
renaming with the user's mapping (standard name -> the user's column: the panel's ``columns``,
the console script's flags); a message names the columns back as the user wrote them, lists
the file's own columns and says which change of the mapping or of the file fixes it.
"""
from __future__ import annotations

import re

import pandas as pd

from .errors import InputError, did_you_mean, say

PERCENT = re.compile(r"^\s*[-+]?(\d+(\.\d*)?|\.\d+)\s*%\s*$")
DECIMAL_COMMA = re.compile(r"^\s*[-+]?\d+,\d+\s*$")


def user_names(mapping: dict | None) -> dict:
    """Standard name -> the user's column, for the names the mapping changes."""
    return {std: user for std, user in (mapping or {}).items() if user != std}


def user_rows(rows, mapping: dict | None):
    """Offending rows shown under the file's own column names (``mapping``: standard -> the
    user's); a name the rows already have is left as it is."""
    if rows is None or not mapping:
        return rows
    return rows.rename(columns={std: user for std, user in user_names(mapping).items()
                                if user not in rows.columns})


def file_columns(columns, mapping: dict | None) -> list[str]:
    """The file's own column names, from the columns after renaming."""
    named = user_names(mapping)
    return [named.get(c, c) for c in columns]


def missing_columns_error(source, absent: list[str], columns, required: list[str],
                          mapping: dict | None = None) -> InputError:
    """Columns ``absent`` (standard names) of a table whose columns after renaming are
    ``columns``; with the user's ``mapping``, each is named as the user called it, the file's
    own columns are listed and the nearest of them offered ("did you mean 'prompt_id'?")."""
    if mapping is None:  # the names after renaming are all there is to show
        return InputError(source, f"missing column(s) {absent}; it has {list(columns)} (after "
                          f"renaming with {say('columns')})",
                          f"columns {required}: map your own names to these with "
                          f"{say('columns')} (e.g. {say('column example')})")
    named, own = user_names(mapping), file_columns(columns, mapping)
    free = [c for c in own if c not in named.values()]  # file columns no name is mapped to
    wanted, fixes = [], []
    for standard in absent:
        user = named.get(standard)
        wanted.append(f"{standard} (your '{user}')" if user else standard)
        near = did_you_mean(user or standard, free)
        fix = say("column fix", standard, near or "<column>")
        if user:
            fixes.append(f"your '{user}' is not a column of {say('table')}: " + (
                f"did you mean '{near}'? ({fix})" if near else f"name one of its columns ({fix})"))
        else:
            fixes.append(f"no column '{standard}': " + (
                f"did you mean '{near}'? ({fix})" if near else
                f"map your own names to these with {say('columns')} "
                f"(e.g. {say('column example')})"))
    return InputError(source, f"missing column(s) {wanted}; it has {own}",
                      f"columns {required}; " + "; ".join(fixes))


def non_numeric_fix(values: pd.Series, column: str, score_range) -> str:
    """How to make the shown non-numeric scores numbers: percentages lose their % sign, decimal
    commas become points; else the column is converted to numbers."""
    text = values.dropna().astype(str)
    if len(text) and text.str.match(PERCENT).all():
        numbers = pd.to_numeric(text.str.replace("%", "").str.strip())
        fix = (f"these are percentages (such as '{text.iloc[0].strip()}'): write them as numbers "
               f"without the % sign (in pandas: runs['{column}'] = "
               f"runs['{column}'].str.rstrip('%').astype(float))")
        if score_range is not None and numbers.max() > score_range[1]:
            fix += f", on the scale 0-100 ({say('score_range')}: [0, 100])"
        return fix
    if len(text) and text.str.match(DECIMAL_COMMA).all():
        return (f"these use a decimal comma (such as '{text.iloc[0].strip()}'): write decimals "
                f"with a point (in pandas: runs['{column}'] = runs['{column}']"
                ".str.replace(',', '.').astype(float))")
    return (f"convert column '{column}' to numbers (in pandas: "
            f"pd.to_numeric(runs['{column}'], errors='coerce') shows which are not), or map "
            f"the score to a numeric column with {say('columns')}")


def non_numeric_error(source, n: int, rows, score_range, mapping: dict | None) -> InputError:
    """Scores that are not numbers, named by the user's column, with the rows shown under the
    file's own column names and a fix for the values shown."""
    column = user_names(mapping).get("score", "score")
    where = f" in column '{column}'" if column != "score" else ""
    expected = f"a number in column '{column}'"
    if rows is not None and len(rows) and "score" in rows:
        expected += "; " + non_numeric_fix(rows["score"], column, score_range)
    return InputError(source, f"{n} non-numeric score(s){where}", expected,
                      user_rows(rows, mapping), n_rows=n)
