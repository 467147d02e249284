"""Messages a new user met: each reproduces what the user gave, checks that the message
names the user's own column or key, and applies the fix it offers, which must then work. The
workflow runs of the column typo and the percent scores, which also check that a failed run ends
with the rule's message, are in tests/test_workflow.py (bad input); a table of one run per cell
through the workflow (the CMI test refused in ingest, the held-out and task-count logs) is
tests/test_own_data_run.py."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from polyjudge.data import sources
from polyjudge.data.errors import InputError, messages_for
from polyjudge.report.summary import failed_rules, failure_summary, last_message, run_summary

from conftest import DEVAI_DIR

REPO = Path(__file__).resolve().parents[1]
COLUMNS = {"task": "prompt_id", "score": "pct", "backbone": "judge_model"}


@pytest.fixture
def my_runs(tmp_path):
    """A user's run table with their own column names (a slice of the devai panel)."""
    runs = pd.read_parquet(DEVAI_DIR / "run_level_scores.parquet")
    runs = runs[runs["backbone"].isin(["gpt-4o", "qwen3.5-9b"])
                & runs["language"].isin(["English", "Spanish"])]
    runs = runs.rename(columns={"task": "prompt_id", "score": "pct", "backbone": "judge_model"})
    path = tmp_path / "my_runs.csv"
    runs.to_csv(path, index=False)
    return path


def ingest_error(path, columns) -> str:
    """The workflow ingest's message (sources.scan_source, worded for the workflow)."""
    with messages_for("workflow"), pytest.raises(InputError) as caught:
        sources.scan_source(str(path), str(path), columns)
    return str(caught.value)


def test_a_typo_in_columns_names_the_users_column_and_the_files_nearest(my_runs):
    text = ingest_error(my_runs, {**COLUMNS, "task": "promptid"})
    first = text.splitlines()[0]
    assert "missing column(s) [\"task (your 'promptid')\"]" in first
    own = list(pd.read_csv(my_runs, nrows=0).columns)
    assert f"it has {own}" in first  # the file's own columns, not the renamed ones
    assert "'score'" not in first and "'pct'" in first
    fix = re.search(r"did you mean '(\w+)'\? \(columns: \{task: (\w+)\}\)", text)
    assert fix and fix.group(1) == fix.group(2) == "prompt_id", text
    stats = sources.scan_source(str(my_runs), str(my_runs), {**COLUMNS, "task": fix.group(1)})
    assert stats.n_runs == len(pd.read_csv(my_runs))


def test_the_console_script_and_the_workflow_word_the_typo_alike(my_runs):
    """One builder of the message: the console script gives the same problem, its flag as fix."""
    result = subprocess.run([sys.executable, "-m", "polyjudge.cli", "fit", str(my_runs),
                             "--task", "promptid", "--score", "pct", "--backbone", "judge_model",
                             "-o", str(my_runs.with_suffix(".json"))],
                            capture_output=True, text=True)
    assert result.returncode == 2
    workflow = ingest_error(my_runs, {**COLUMNS, "task": "promptid"})
    assert workflow.splitlines()[0] in result.stderr
    assert "did you mean 'prompt_id'? (--task prompt_id)" in result.stderr


def test_an_unmapped_column_close_to_a_standard_name_is_offered(my_runs):
    runs = pd.read_csv(my_runs).drop(columns="judged_language").rename(
        columns={"language": "lang"})
    runs.to_csv(my_runs, index=False)
    text = ingest_error(my_runs, COLUMNS)
    assert "no column 'language': did you mean 'lang'? (columns: {language: lang})" in text


def test_percent_scores_name_the_users_column_and_a_fix_that_works(my_runs):
    runs = pd.read_csv(my_runs)
    runs["pct"] = runs["pct"].map(lambda value: f"{value:.2f}%")
    runs.to_csv(my_runs, index=False)
    text = ingest_error(my_runs, COLUMNS)
    assert text.splitlines()[0].endswith(f"{len(runs)} non-numeric score(s) in column 'pct'")
    assert "expected: a number in column 'pct'" in text and "% sign" in text
    assert "  pct " in text and " score " not in text  # the rows under the file's own names
    code = re.search(r"in pandas: (runs\['pct'\] = .*?\))\)?$", text, re.M).group(1)
    exec(code, {"runs": runs})  # the fix as the message writes it
    runs.to_csv(my_runs, index=False)
    stats = sources.scan_source(str(my_runs), str(my_runs), COLUMNS)
    assert stats.n_runs == len(runs)


# --- a table with one run per cell and no framework column (the reader adds one) ---------------

MY_COLUMNS = {"task": "prompt_id", "language": "lang", "backbone": "judge_model", "score": "pct"}


def one_run_per_cell(n_tasks=12) -> pd.DataFrame:
    """A new user's table: 12 tasks x 3 languages x 3 judges, one run per cell, ratings 0-100
    (none 100), the columns prompt_id, lang, judge_model, pct and no framework column."""
    scores = np.random.default_rng(0).uniform(0, 99.9, (n_tasks, 3, 3)).round(1)
    rows = [(f"p{t:02d}", lang, judge, float(scores[t, i, j]))
            for t in range(n_tasks) for i, lang in enumerate(["en", "de", "fr"])
            for j, judge in enumerate(["gpt", "claude", "llama"])]
    return pd.DataFrame(rows, columns=list(MY_COLUMNS.values()))


@pytest.fixture
def my_csv(tmp_path):
    path = tmp_path / "my_runs.csv"
    one_run_per_cell().to_csv(path, index=False)
    return path


def api_error(function, runs, **kwargs) -> str:
    with pytest.raises(InputError) as caught:
        function(runs, **kwargs)
    return str(caught.value)


def test_a_typo_lists_only_the_files_own_columns_not_the_framework_the_reader_adds(my_csv):
    own = list(pd.read_csv(my_csv, nrows=0).columns)
    assert "framework" not in own
    text = ingest_error(my_csv, {**MY_COLUMNS, "backbone": "judge_modle"})
    first = text.splitlines()[0]
    assert first.endswith(f"it has {own}") and "framework" not in first, text
    assert "not a column of the file: did you mean 'judge_model'?" in text
    stats = sources.scan_source(str(my_csv), str(my_csv), MY_COLUMNS)  # the fix offered
    assert stats.n_runs == 108


def test_a_dataframe_is_named_as_the_dataframe_passed_in_not_the_file():
    import polyjudge
    runs = one_run_per_cell()
    arguments = {**MY_COLUMNS, "backbone": "judge_modle"}
    text = api_error(polyjudge.calibrate, runs, **arguments, score_range=(0, 100))
    assert f"it has {list(runs.columns)}" in text.splitlines()[0], text
    assert "the file" not in text and "not a column of the DataFrame passed in" in text
    fix = re.search(r"did you mean '(\w+)'\? \(backbone='(\w+)'\)", text)
    assert fix and fix.group(1) == fix.group(2) == "judge_model", text
    assert polyjudge.calibrate(runs, **{**arguments, "backbone": fix.group(2)}).beta.shape[0] == 9


@pytest.mark.parametrize("reader", ["workflow", "api"])
def test_sample_rows_show_only_the_users_columns(my_csv, reader):
    """The '%' scores' and the repeated rows' samples showed the added `framework single` (the
    repeated ones under the standard names): now the table's own columns, by its own names."""
    import polyjudge
    runs = one_run_per_cell()
    percent = runs.assign(pct=runs["pct"].map(lambda v: f"{v:g}%"))
    repeated = pd.concat([runs, runs.head(2)], ignore_index=True)
    for table, problem in ((percent, "non-numeric score(s) in column 'pct'"),
                           (repeated, "rows share the same")):
        if reader == "workflow":
            table.to_csv(my_csv, index=False)
            text = ingest_error(my_csv, MY_COLUMNS)
        else:
            text = api_error(polyjudge.calibrate, table, **MY_COLUMNS)
        assert problem in text, text
        shown = text.split("offending rows", 1)[1].splitlines()[1]  # the header of the rows
        assert shown.split() == list(runs.columns) and "single" not in text, text


def test_the_cmi_test_on_one_run_per_cell_says_what_it_needs_and_how_to_give_it():
    import polyjudge
    runs = one_run_per_cell()
    text = api_error(polyjudge.cmi_test, runs, **MY_COLUMNS)
    assert text.startswith("runs: one run per task x language x backbone cell: the CMI test")
    assert "told apart by a column named as the framework (framework='<column>')" in text
    assert "polyjudge.calibrate" in text  # what runs on one run per cell
    repeated = pd.concat([runs.assign(seed=seed, pct=runs["pct"] + seed) for seed in (1, 2)])
    result = polyjudge.cmi_test(repeated, **MY_COLUMNS, framework="seed", permutations=8)
    assert result.summary["points_per_stratum"] == 3 * 2


def test_both_analyses_that_need_repeated_runs_are_named_with_the_list_without_them():
    from polyjudge.data import shape
    listed = ["cbc", "information", "reversal", "diagnostics"]
    with messages_for("workflow"), pytest.raises(InputError) as caught:
        shape.require_repeated_runs(np.ones((4, 2, 2)), "my_runs.csv", "mine", listed)
    text = str(caught.value)
    assert "panel 'mine' lists analyses 'information' (the CMI test" in text
    assert "and 'diagnostics' (the three-way interaction test" in text
    assert text.endswith("drop 'information' and 'diagnostics' from the panel's `analyses` "
                         "(analyses: [cbc, reversal])")
    shape.require_repeated_runs(np.ones((4, 2, 2)), "my_runs.csv", "mine", ["cbc", "reversal"])
    shape.require_repeated_runs(np.full((4, 2, 2), 2), "my_runs.csv", "mine", listed)


@pytest.mark.parametrize("score_range", [(0, 100), None])
def test_dawid_skene_says_once_why_not_with_a_threshold_of_the_panels_scale(caplog,
                                                                           score_range):
    """heldout logged a method that cannot run three times (every replicate pass, the full fit,
    the summary) and offered "e.g. 10 on 1-10" whatever the scale."""
    import polyjudge
    runs = one_run_per_cell()
    with caplog.at_level("WARNING", logger="polyjudge.analyses.heldout"):
        held = polyjudge.heldout(runs, **MY_COLUMNS, score_range=score_range, replicates=20)
    for method in ("Dawid-Skene", "Dawid-Skene (requirement)"):
        said = [r.getMessage() for r in caplog.records if f"{method}:" in r.getMessage()]
        assert len(said) == 1, said
    reason = held.tau.set_index("method").loc["Dawid-Skene", "reason"]
    assert "1-10" not in reason and ("[0, 100]" in reason) == (score_range is not None)
    threshold = float(re.search(r"e\.g\. verdict_threshold=(\S+) \(", reason).group(1))
    if score_range is not None:
        assert threshold == 50  # the middle of the scale splits these ratings
    fixed = polyjudge.heldout(runs, **MY_COLUMNS, score_range=score_range, replicates=20,
                              verdict_threshold=threshold, methods=["CBC", "Dawid-Skene"])
    row = fixed.tau.set_index("method").loc["Dawid-Skene"]
    assert row["n_replicates"] > 0 and row["reason"] == ""


def test_decimal_commas_get_their_own_fix():
    from polyjudge.data.column_names import non_numeric_fix
    assert "decimal comma" in non_numeric_fix(pd.Series(["65,5", "7,25"]), "pct", (0, 100))
    assert "convert column 'pct' to numbers" in non_numeric_fix(pd.Series(["n/a"]), "pct", None)


def test_the_end_of_run_summary_names_the_results_page(tmp_path):
    (tmp_path / "index.html").write_text("<html></html>")
    text = run_summary({"mine": ["cbc"]}, tmp_path)
    assert f"results page: {tmp_path / 'index.html'}" in text
    assert "snakemake --report" in text


SNAKEMAKE_LOG = """\
Error in rule ingest:
    message: None
    jobid: 2
    input: data/my_runs.csv
    output: results/mine/runs.parquet
    log: {log} (check log file(s) for error details)
Logfile {log}:
================================================================================
"""


def test_a_failed_run_ends_with_the_failed_rules_own_message(tmp_path):
    log = tmp_path / "ingest.log"
    log.write_text("2026-12-02 12:35:48,003 INFO [polyjudge] rule ingest, wildcards {}\n"
                   "2026-12-02 12:35:48,139 ERROR [polyjudge] my_runs.csv: 3 non-numeric "
                   "score(s) in column 'pct'\n  expected: a number in column 'pct'\n"
                   "  (rule ingest, panel mine)\n")
    main = tmp_path / "run.snakemake.log"
    main.write_text(SNAKEMAKE_LOG.format(log=log) * 2)  # reported twice: shown once
    assert failed_rules(main.read_text()) == [("ingest", [str(log)])] * 2
    assert last_message(log.read_text()).startswith("my_runs.csv: 3 non-numeric")
    text = failure_summary([str(main)])
    assert text.splitlines() == [
        "polyjudge: the run stopped; the failed step(s) said:",
        f"  rule ingest ({log}):",
        "    my_runs.csv: 3 non-numeric score(s) in column 'pct'",
        "      expected: a number in column 'pct'",
        "      (rule ingest, panel mine)"]
    assert "Snakemake's messages above" in failure_summary(str(tmp_path / "absent.log"))


def readme_forecast_command() -> list[str]:
    """The user's guide's forecast command (``snakemake plan ... mrewardbench_stop.yaml``, in
    docs/running.md, which the README links), as words."""
    readme = (REPO / "docs" / "running.md").read_text()
    found = re.search(r"^(snakemake plan [^\n]*mrewardbench_paper\.yaml \\\n[^\n#]*)", readme,
                      re.M)
    assert found, "docs/running.md has no forecast command on mrewardbench_paper.yaml"
    return found.group(1).replace("\\\n", " ").split()


@pytest.mark.slow
def test_the_readmes_forecast_command_names_the_item_table_to_provide(tmp_path):
    """On a clone without the M-RewardBench texts the command stopped with Snakemake's bare
    MissingInputException; it now stops at start-up naming the file, its columns, where the
    texts come from and the stand-in config that plans without them (which runs: a dry run
    here), and runs (a dry run) once a table of that layout is there."""
    from judge_items import pointwise_items
    words = readme_forecast_command()
    assert words[:2] == ["snakemake", "plan"] and "mrewardbench_stop.yaml" in words[-1]
    data = tmp_path / "data"
    shutil.copytree(REPO / "data" / "mrewardbench_panel", data / "mrewardbench_panel")
    command = [sys.executable, "-m", "snakemake", *words[1:], "-s", str(REPO / "Snakefile"),
               "--config", f"data_dir={data}"]
    command = [str(REPO / w) if w.startswith("config/") else w for w in command]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    text = result.stdout + result.stderr
    assert result.returncode != 0 and "MissingInputException" not in text
    table = data / "mrewardbench" / "items.parquet"
    assert f"`collect.items: mrewardbench/items.parquet` is not there (looked for {table})" in text
    assert "columns ['subset', 'item_index', 'language', 'input', 'chosen', 'rejected']" in text
    assert "M-RewardBench on Hugging Face" in text
    assert "ValueError" not in text and "Traceback" not in text  # the message alone
    # the fix on a fresh clone: the stand-in config, stacked last, plans without the texts
    standin = re.search(r"add the clone's stand-in config last: (snakemake plan [^(]*?) \(",
                        text)
    assert standin and words[-1] in standin.group(1), text
    shutil.copytree(REPO / "data" / "examples", data / "examples")
    planned = [sys.executable, "-m", "snakemake", *standin.group(1).split()[1:], "-s",
               str(REPO / "Snakefile"), "--config", f"data_dir={data}"]
    planned = [str(REPO / w) if w.startswith("config/") else w for w in planned]
    dry = subprocess.run(planned, cwd=tmp_path, capture_output=True, text=True)
    assert dry.returncode == 0 and "collection_forecast" in dry.stdout + dry.stderr, \
        dry.stderr[-3000:]
    # the forecast as people read it: whole items and calls, costs in cents (4 significant
    # digits at most), fractions to 4 decimals; it was written with 17 digits
    path = tmp_path / "results/mrewardbench/collect/forecast.csv"
    assert not re.search(r"\d\.\d{5,}", path.read_text())
    assert "mrewardbench,full design,1500,105000,56.1,28.05,1.0,31," in path.read_text()
    assert all(pd.read_csv(path)[c].dtype.kind == "i" for c in ("items", "calls", "rounds"))
    shutil.rmtree(tmp_path / "results")
    table.parent.mkdir()
    languages = ["eng_Latn", "arb_Arab", "tur_Latn", "zho_Hans", "hin_Deva", "jpn_Jpan",
                 "spa_Latn"]
    pointwise_items(60, languages).to_parquet(table, index=False)
    dry = subprocess.run(command + ["--dry-run"], cwd=tmp_path, capture_output=True, text=True)
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert "collection_forecast" in dry.stdout + dry.stderr
