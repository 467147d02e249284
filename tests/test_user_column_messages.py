"""Reading errors name the user's own columns: for a run table whose columns are prompt_id,
lang, judge_model and pct, every kind of bad input the readers report, through every place a
table enters (a DataFrame given to the API, polyjudge.read_runs on CSV, Parquet and JSON Lines,
the console script on a file and on JSON Lines), names the user's column ("column 'prompt_id'
(the task column)", "in column 'pct'") and never a standard name alone ('task', 'score')."""
import contextlib
import io as text_io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import polyjudge
from polyjudge import cli
from polyjudge.data.errors import InputError

COLUMNS = {"task": "prompt_id", "language": "lang", "backbone": "judge_model", "score": "pct"}
FLAGS = [item for standard, user in COLUMNS.items() for item in (f"--{standard}", user)]
BIN = Path(sys.executable).parent / "polyjudge"
COMMAND = str(BIN) if BIN.exists() else shutil.which("polyjudge")


def runs_table() -> pd.DataFrame:
    """3 tasks x 2 languages x 2 backbones, one run per cell, under the user's names."""
    cells = [(t, l, b) for t in ("t1", "t2", "t3") for l in ("en", "de") for b in ("gpt", "llm")]
    return pd.DataFrame({"prompt_id": [c[0] for c in cells], "lang": [c[1] for c in cells],
                         "judge_model": [c[2] for c in cells],
                         "pct": 40.0 + np.arange(len(cells))})


def duplicate(runs):
    runs.loc[1, ["lang", "judge_model"]] = runs.loc[0, ["lang", "judge_model"]].to_numpy()
    return runs


def set_cell(column, value, rows=(3,), dtype=None):
    def change(runs):
        if dtype is not None:
            runs = runs.astype({column: dtype})
        runs.loc[list(rows), column] = value
        return runs
    return change


def unscored(runs):
    runs.loc[runs["lang"] == "de", "pct"] = np.nan
    return runs


# kind -> (the table, options, the user's column it must name, what it says; JSON Lines: what
# it says there, None for the same, "" if the reader has nothing to report)
CASES = {
    "duplicate runs": (duplicate, {}, "prompt_id",
                       "2 rows share the same ['prompt_id', 'lang', 'judge_model'] (task, "
                       "language, backbone)", None),
    "empty task": (set_cell("prompt_id", None, (2,), object), {}, "prompt_id",
                   "column 'prompt_id' (the task column) is empty in 1 row(s)",
                   "1 record(s) without a value at 'prompt_id' (the task)"),
    "blank language": (set_cell("lang", " ", (2,)), {}, "lang",
                       "column 'lang' (the language column) is empty in 1 row(s)", None),
    "empty backbone": (set_cell("judge_model", "", (5,)), {}, "judge_model",
                       "column 'judge_model' (the backbone column) is empty in 1 row(s)", None),
    "non-numeric score": (set_cell("pct", "abc", dtype=str), {}, "pct",
                          "1 non-numeric score(s) in column 'pct'", None),
    "score out of range": (set_cell("pct", 150.0), {"score_range": (0, 100)}, "pct",
                           "1 score(s) outside [0, 100] in column 'pct'", None),
    "infinite score": (set_cell("pct", np.inf), {}, "pct",
                       "1 infinite score(s) in column 'pct'", None),
    "NaN score": (set_cell("pct", np.nan), {}, "pct", "1 missing (NaN) score(s) in column 'pct'",
                  "1 record(s) without a value at 'pct' (the score)"),
    "every score missing": (set_cell("pct", np.nan, range(12)), {"missing": "omit"}, "pct",
                            "all 12 scores in column 'pct' are missing", None),
    "a language without scores": (unscored, {"missing": "omit"}, "lang",
                                  "language(s) ['de'] in column 'lang' have runs but every "
                                  "score in column 'pct' is missing", None),
    "missing column": (lambda runs: runs.rename(columns={"prompt_id": "prompt"}), {},
                       "prompt_id", "missing column(s) [\"task (your 'prompt_id')\"]; it has "
                       "['prompt', 'lang', 'judge_model', 'pct']",
                       "12 record(s) without a value at 'prompt_id' (the task)"),
}
# kinds found when the panel is built (the API and the console script; read_runs returns runs)
PANEL_CASES = {
    "unbalanced panel": (lambda runs: runs.drop(index=[3]), {}, "judge_model",
                         "1 of 12 task x language x backbone cells have no runs", None),
    "configured language without runs": (lambda runs: runs, {"languages": ["en", "de", "fr"]},
                                         "lang", "language(s) ['fr'] are configured but have "
                                         "no runs in column 'lang'", None),
}
STANDARD = ("task", "language", "backbone", "score")


def check_message(message: str, user: str, says: str) -> None:
    assert says in message, message
    assert re.search(rf"(?<![\w.]){user}(?![\w.])", message), message  # quoted or a heading
    alone = [name for name in STANDARD if f"'{name}'" in message]
    assert not alone, f"names the standard {alone} alone:\n{message}"


def write(runs: pd.DataFrame, path: Path) -> Path:
    if path.suffix == ".parquet":
        runs.to_parquet(path, index=False)
    elif path.suffix == ".jsonl":
        with open(path, "w", encoding="utf-8") as handle:
            for record in runs.to_dict("records"):
                record = {k: v for k, v in record.items() if not (isinstance(v, float)
                                                                  and np.isnan(v))}
                handle.write(json.dumps(record) + "\n")
    else:
        runs.to_csv(path, index=False)
    return path


def api_error(function, *args, **kwargs) -> str:
    with pytest.raises(InputError) as caught:
        function(*args, **kwargs)
    return str(caught.value)


def cli_error(path: Path, options: dict, tmp_path: Path) -> str:
    argv = ["fit", str(path), "-o", str(tmp_path / "calibrator.json"), *FLAGS,
            "--band-replicates", "0"]
    if "score_range" in options:
        argv += ["--score-range", *map(str, options["score_range"])]
    if "missing" in options:
        argv += ["--missing", options["missing"]]
    if "languages" in options:
        argv += ["--languages", *options["languages"]]
    stderr = text_io.StringIO()
    with contextlib.redirect_stderr(stderr):
        assert cli.main(argv) == 2
    assert not (tmp_path / "calibrator.json").exists()
    return stderr.getvalue()


@pytest.mark.parametrize("kind", [*CASES, *PANEL_CASES])
def test_every_reading_error_names_the_users_column(kind, tmp_path):
    change, options, user, says, json_says = {**CASES, **PANEL_CASES}[kind]
    runs = change(runs_table())
    check_message(api_error(polyjudge.prepare_runs, runs, **COLUMNS, **options), user, says)
    check_message(cli_error(write(runs, tmp_path / "runs.csv"), options, tmp_path), user, says)
    check_message(cli_error(write(runs, tmp_path / "runs.jsonl"), options, tmp_path), user,
                  json_says or says)
    if kind in PANEL_CASES:
        return
    read = {k: v for k, v in options.items() if k in ("score_range", "missing")}
    for suffix in (".csv", ".parquet", ".jsonl"):
        path = write(runs, tmp_path / f"runs{suffix}")
        message = api_error(polyjudge.read_runs, str(path), COLUMNS, **read)
        check_message(message, user, json_says or says if suffix == ".jsonl" else says)
        assert message.startswith(str(path)), message


def test_the_rows_shown_are_under_the_users_names(tmp_path):
    runs = duplicate(runs_table())
    for message in (api_error(polyjudge.prepare_runs, runs, **COLUMNS),
                    api_error(polyjudge.read_runs, str(write(runs, tmp_path / "r.csv")), COLUMNS),
                    cli_error(write(runs, tmp_path / "r.parquet"), {}, tmp_path)):
        assert "prompt_id lang judge_model   pct" in message, message
    cells = api_error(polyjudge.prepare_runs, runs_table().drop(index=[3]), **COLUMNS)
    assert "missing cells:\n      prompt_id lang judge_model" in cells


def test_a_repeated_run_without_a_framework_column_is_told_how_to_keep_it(tmp_path):
    runs = runs_table()
    runs = pd.concat([runs, runs.iloc[[0]].assign(pct=41.5)], ignore_index=True)
    message = api_error(polyjudge.prepare_runs, runs, **COLUMNS)
    assert "and the table has no framework column to tell repeated runs apart" in message
    assert "one row per ('prompt_id', 'lang', 'judge_model')" in message
    assert "named as the framework (framework='<column>')" in message
    seeded = runs.assign(seed=[1] * 12 + [2])
    message = api_error(polyjudge.prepare_runs, seeded, **COLUMNS)
    assert "column 'seed' tells these rows apart" in message and "framework='seed'" in message
    fixed = polyjudge.prepare_runs(seeded, **COLUMNS, framework="seed")[0]  # the fix works
    assert len(fixed) == 13


def test_a_framework_column_is_named_by_the_users_name(tmp_path):
    runs = runs_table().assign(seed="s1")
    runs.loc[4, "seed"] = ""
    message = api_error(polyjudge.prepare_runs, runs, **COLUMNS, framework="seed")
    assert "column 'seed' (the framework column) is empty in 1 row(s)" in message
    runs.loc[4, "seed"] = "s1"
    message = api_error(polyjudge.prepare_runs, duplicate(runs), **COLUMNS, framework="seed")
    assert ("2 rows share the same ['prompt_id', 'lang', 'judge_model', 'seed'] (task, "
            "language, backbone, framework)") in message


def test_a_column_that_would_become_the_mapped_one_is_named_with_the_fix(tmp_path):
    """A file with 'pct' (mapped to the score) and its own 'score': pandas gave the API a
    TypeError; every reader names both columns and the fix, which works."""
    runs = runs_table().assign(score=1.0)
    says = "columns ['pct', 'score'] would both be the score column: 'pct' is mapped to it"
    message = api_error(polyjudge.prepare_runs, runs, **COLUMNS)
    assert says in message and "(score='pct')" in message
    assert "drop or rename the column 'score' of the DataFrame passed in" in message
    for suffix in (".csv", ".parquet"):
        path = write(runs, tmp_path / f"runs{suffix}")
        message = api_error(polyjudge.read_runs, str(path), COLUMNS)
        assert says in message and "(columns: {score: pct})" in message, message
        assert "--score pct" in cli_error(path, {}, tmp_path)
    polyjudge.prepare_runs(runs.drop(columns="score"), **COLUMNS)  # the fix works
    twice = write(runs_table(), tmp_path / "twice.csv")
    twice.write_text(twice.read_text().replace("pct\n", "pct,pct\n", 1).replace("\n", ",1\n")
                     .replace("pct,pct,1\n", "pct,pct\n"))
    message = api_error(polyjudge.read_runs, str(twice), COLUMNS)
    assert "column name(s) ['pct'] appear more than once" in message


def test_requirement_tables_and_many_files_name_the_users_columns(tmp_path):
    runs = runs_table()
    requirements = runs[["prompt_id", "lang", "judge_model"]].assign(requirement_id="r1",
                                                                     category="c", satisfied=1)
    requirements.loc[2, "lang"] = ""
    message = api_error(polyjudge.heldout, runs, requirements=requirements, replicates=10,
                        **COLUMNS)
    check_message(message, "lang", "column 'lang' (the language column) is empty in 1 row(s)")
    folder = tmp_path / "judges" / "gpt"
    folder.mkdir(parents=True)
    write(runs.drop(columns="lang"), folder / "en.csv")  # the llm judge's runs under gpt/
    message = api_error(polyjudge.read_runs, {"path": str(tmp_path / "judges"),
                                              "template": "{judge_model}/{lang}.csv"}, COLUMNS)
    check_message(message, "judge_model", "field 'judge_model' (the backbone) is 'gpt' in its "
                  "path (the template '{judge_model}/{lang}.csv') but 'llm' in column "
                  "'judge_model' of 6 of its 12 rows")
    write(runs.assign(seed="s"), tmp_path / "a.csv")
    write(runs, tmp_path / "b.csv")
    message = api_error(polyjudge.read_runs, [str(tmp_path / "a.csv"), str(tmp_path / "b.csv")],
                        {**COLUMNS, "framework": "seed"})
    check_message(message, "prompt_id", "has the columns ['judge_model', 'lang', 'pct', "
                  "'prompt_id'], but")


def test_the_installed_command_names_the_users_columns(tmp_path):
    assert COMMAND, "the polyjudge console script is not installed (pip install -e .)"
    path = write(set_cell("prompt_id", None, (2,), object)(runs_table()), tmp_path / "runs.csv")
    result = subprocess.run([COMMAND, "fit", str(path), "-o", str(tmp_path / "c.json"), *FLAGS],
                            capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    check_message(result.stderr, "prompt_id",
                  "column 'prompt_id' (the task column) is empty in 1 row(s)")
