"""The user's own column names in messages about a run table.

Tables are checked under the standard names (task, language, backbone, framework, score) after
renaming with the user's mapping (standard name -> the user's column: the panel's ``columns``,
the console script's flags); a message names the columns back as the user wrote them ("column
'prompt_id' (the task column) is empty"), lists the file's own columns and says which change of
the mapping or of the file fixes it. The messages about a table's keys (empty, repeated) and
its columns (absent, given twice) are built here, for the readers in memory (:mod:`.io`) and in
batches (:mod:`.streaming`).
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


def column(standard: str, mapping: dict | None) -> str:
    """The user's name of a standard column (the standard name where it is not renamed)."""
    return user_names(mapping).get(standard, standard)


def named(standard: str, mapping: dict | None) -> str:
    """A column as a message names it: "'prompt_id' (the task column)", or "'task'" where the
    user's column has the standard name."""
    user = user_names(mapping).get(standard)
    return f"'{user}' (the {standard} column)" if user else f"'{standard}'"


def listed(standards, mapping: dict | None) -> str:
    """Columns as a message lists them: "['prompt_id', 'lang'] (task, language)", or
    "['task', 'language']" where none is renamed."""
    names = [column(name, mapping) for name in standards]
    return f"{names}" + (f" ({', '.join(standards)})" if names != list(standards) else "")


def in_column(standard: str, mapping: dict | None) -> str:
    """" in column 'pct'" for a renamed column, else "" (the standard name says which)."""
    user = user_names(mapping).get(standard)
    return f" in column '{user}'" if user else ""


def file_columns(columns, mapping: dict | None) -> list[str]:
    """The file's own column names, from the columns after renaming."""
    users = user_names(mapping)
    return [users.get(c, c) for c in columns]


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
    users, own = user_names(mapping), file_columns(columns, mapping)
    free = [c for c in own if c not in users.values()]  # file columns no name is mapped to
    wanted, fixes = [], []
    for standard in absent:
        user = users.get(standard)
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
                      f"columns {listed(required, mapping)}; " + "; ".join(fixes))


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


def check_unique(source, names, rename: dict) -> None:
    """Each column once after renaming (``names``: the table's own; ``rename``: the table's
    name -> standard name): a name the table repeats is named as it is, and a column that
    would become a standard one the mapping already gives ('score' beside the mapped 'pct')
    is named with the mapping that clashes and the fixes."""
    names = [str(name) for name in names]
    after = [rename.get(name, name) for name in names]
    repeated = [name for name in dict.fromkeys(after) if after.count(name) > 1]
    if not repeated:
        return
    own = {standard: list(dict.fromkeys(n for n in names if rename.get(n, n) == standard))
           for standard in repeated}
    twice = [standard for standard in repeated if len(own[standard]) == 1]
    if twice:
        raise InputError(source, f"column name(s) {[own[s][0] for s in twice]} appear more "
                         "than once", f"each column name once in {say('table')} (rename or "
                         "drop the repeated ones)")
    standard = repeated[0]
    mapped = next(name for name in own[standard] if name != standard)
    raise InputError(source, f"columns {own[standard]} would both be the {standard} column: "
                     f"'{mapped}' is mapped to it ({say('column fix', standard, mapped)})",
                     f"one column per field: drop or rename the column '{standard}' of "
                     f"{say('table')}, or read '{standard}' itself as the {standard} "
                     f"({say('column fix', standard, standard)})")


def empty_key_error(source, key: str, n: int, rows, mapping: dict | None = None) -> InputError:
    """Rows without a label in ``key`` (a standard name), named and shown under the user's
    column names (``mapping``)."""
    return InputError(source, f"column {named(key, mapping)} is empty in {n} row(s)",
                      f"a label in every row of '{column(key, mapping)}'",
                      user_rows(rows, mapping), n_rows=n)


def duplicate_error(source, keys: list[str], n: int, rows,
                    mapping: dict | None = None) -> InputError:
    """Rows sharing their keys (standard names), named and shown under the user's column names
    (``mapping``). A table without a framework column (the rows shown have none) is one run
    per cell: its keys are listed without it, and a column that tells the repeats apart (a
    seed, a repeat number) is suggested as the framework, or else a column to add."""
    own = rows is None or "framework" in rows.columns or "framework" not in keys
    shown = list(keys) if own else [key for key in keys if key != "framework"]
    problem = f"{n} rows share the same {listed(shown, mapping)}"
    expected = f"one row per {tuple(column(key, mapping) for key in shown)}"
    repeat = _repeat_column(rows, keys)
    if repeat is not None:
        expected += (f"; column '{column(repeat, mapping)}' tells these rows apart: name it "
                     f"as the framework ({say('framework column', column(repeat, mapping))}) "
                     "to keep them as repeated runs")
    elif not own:
        problem += ", and the table has no framework column to tell repeated runs apart"
        expected += ("; or, for repeated runs of a cell, a column that tells them apart (a "
                     f"seed, a repeat number) named as the framework "
                     f"({say('framework column', '<column>')})")
    return InputError(source, problem, expected, user_rows(rows, mapping), n_rows=n)


def _repeat_column(rows, keys: list[str]) -> str | None:
    """A column of the offending rows that, with the keys, makes them unique, when the table
    has no framework column (every framework "single", or none shown)."""
    if rows is None or "framework" not in keys or len(rows) < 2 or not (
            rows.get("framework", pd.Series(["single"])).astype(str) == "single").all():
        return None
    shown = [key for key in keys if key in rows.columns]
    for name in rows.columns:
        if name in (*keys, "score", "stratum") or rows[name].isna().any():
            continue
        if rows[name].nunique() > 1 and not rows.duplicated([*shown, name]).any():
            return str(name)
    return None
