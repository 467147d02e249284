"""A new user's first hour: each mistake a new user makes gets a message naming what
is at fault and a fix that works, at every place a table enters (API, Calibrator, CLI,
read_runs, workflow). A misspelt config key and the commands written in the docs are
tests/test_config_typos_and_written_commands.py."""
import json
from pathlib import Path
import zipfile

import numpy as np
import pandas as pd
import pytest

import polyjudge
from conftest import dry_run_in
from polyjudge import cli
from polyjudge.analyses.synthetic import simulate_panel
from polyjudge.data import io
from polyjudge.data.errors import InputError

KEYS = ["task", "language", "backbone", "framework"]
REPO = Path(__file__).resolve().parents[1]
USER = {"task": "id", "language": "lang", "backbone": "judge", "score": "rating",
        "framework": "seed"}


def error_of(function, *args, **kwargs) -> str:
    with pytest.raises(InputError) as caught:
        function(*args, **kwargs)
    return str(caught.value)


def categorical_runs(seed=3, n_tasks=8, n_languages=4, n_backbones=3) -> pd.DataFrame:
    """Runs as pd.read_parquet often gives them: identifiers categorical, user column names."""
    runs = simulate_panel(seed=seed, n_tasks=n_tasks, n_languages=n_languages,
                          n_backbones=n_backbones, n_frameworks=2).runs
    return runs.astype({key: "category" for key in KEYS}).rename(columns=USER)


def filtered(runs: pd.DataFrame) -> pd.DataFrame:
    """3 of the 4 languages and 2 of the 3 judges kept: the dropped ones stay as categories."""
    kept = runs[(runs["lang"] != "L4") & (runs["judge"] != "B3")]
    assert "L4" in kept["lang"].cat.categories and "B3" in kept["judge"].cat.categories
    return kept


# --- item 1: labels come from the rows present, never from unused categories -------------------

def test_filtered_categoricals_calibrate_as_the_same_rows_as_text():
    kept = filtered(categorical_runs())
    as_text = kept.astype({USER[key]: str for key in KEYS})
    got, want = polyjudge.calibrate(kept, **USER), polyjudge.calibrate(as_text, **USER)
    assert got.panel.languages == ("L1", "L2", "L3") and got.panel.backbones == ("B1", "B2")
    pd.testing.assert_frame_equal(got.beta, want.beta)
    fitted = polyjudge.Calibrator(**USER).fit(kept)
    assert fitted.languages_ == ["L1", "L2", "L3"] and fitted.backbones_ == ["B1", "B2"]
    np.testing.assert_array_equal(fitted.beta_["beta"], want.beta["beta"])
    out = fitted.transform(kept)
    assert len(out) == len(kept) and out["calibrated"].all()


def test_filtered_categoricals_through_read_runs_and_the_cli(tmp_path):
    kept = filtered(categorical_runs())
    path = tmp_path / "filtered.parquet"
    kept.to_parquet(path)  # the unused categories are written into the Parquet dictionary
    assert "L4" in pd.read_parquet(path)["lang"].cat.categories
    runs = polyjudge.read_runs(path, columns=USER)
    assert sorted(runs["language"].cat.categories) == ["L1", "L2", "L3"]
    assert sorted(runs["backbone"].cat.categories) == ["B1", "B2"]
    assert polyjudge.calibrate(runs).panel.shape == (8, 3, 2)
    flags = [f"--{key}={user}" for key, user in USER.items()]
    assert cli.main(["fit", str(path), "-o", str(tmp_path / "c.json"), *flags]) == 0
    saved = json.loads((tmp_path / "c.json").read_text())
    assert "L4" not in json.dumps(saved) and "B3" not in json.dumps(saved)


def test_a_label_whose_scores_are_all_missing_is_still_named():
    runs = categorical_runs()
    runs.loc[runs["lang"] == "L4", "rating"] = np.nan
    message = error_of(polyjudge.calibrate, runs, **USER, missing="omit")
    assert ("language(s) ['L4'] in column 'lang' have runs but every score in column 'rating' "
            "is missing") in message


# --- item 2: one language or one backbone -------------------------------------------------------

@pytest.mark.parametrize("axis", ["lang", "judge"])
def test_one_language_or_one_backbone_says_what_cbc_needs(axis):
    runs = categorical_runs()
    runs = runs[runs[axis] == runs[axis].iloc[0]]
    for fit in (lambda r: polyjudge.calibrate(r, **USER),
                lambda r: polyjudge.Calibrator(**USER).fit(r),
                lambda r: polyjudge.heldout(r, **USER, replicates=10),
                lambda r: polyjudge.reversal(r, **USER, permutations=9)):
        message = error_of(fit, runs)
        one = "1 language (L1)" if axis == "lang" else "1 backbone (B1)"
        assert one in message and "needs at least 2 languages and at least 2 backbones" in message
        assert "What still runs on this panel" in message
    # the fix offered works: the task-level panel and its raw means
    checked, panel = polyjudge.prepare_runs(runs, **USER)
    assert np.isfinite(panel.cell_means()).all()


# --- item 13: checks that come late -------------------------------------------------------------

def test_a_reversed_score_range_stops_before_any_score_is_checked(tmp_path):
    runs = categorical_runs()
    message = error_of(polyjudge.calibrate, runs, **USER, score_range=(10, 1))
    assert "score_range [10, 1] has low >= high" in message and "[1, 10]" in message
    assert "outside" not in message
    path = tmp_path / "runs.csv"
    runs.to_csv(path, index=False)
    message = error_of(polyjudge.read_runs, path, columns=USER, score_range=[10, 1])
    assert "score_range [10, 1] has low >= high" in message
    assert len(polyjudge.read_runs(path, columns=USER, score_range=[0, 100])) == len(runs)


def test_a_missing_source_names_the_path_it_looked_for(tmp_path):
    from polyjudge.data.sources import source_inputs
    message = error_of(source_inputs, "nodir", tmp_path / "data")
    assert f"looked for {tmp_path / 'data' / 'nodir'}" in message
    assert f"read under data_dir, here {tmp_path / 'data'}" in message


# --- item 7: Excel workbooks ---------------------------------------------------------------------

def workbook(path):
    """The zip layout of an .xlsx (its workbook under xl/), enough to be recognised."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("xl/workbook.xml", "<workbook/>")
    return path


@pytest.mark.parametrize("name", ["all.xlsx", "all.csv"])
def test_an_excel_workbook_is_named_and_the_export_explained(tmp_path, name):
    path = workbook(tmp_path / name)
    for read in (lambda: polyjudge.read_runs(path), lambda: io.read_table(path),
                 lambda: polyjudge.read_runs([str(path)])):
        message = error_of(read)
        assert f"{path}: is a spreadsheet workbook" in message and "UTF-8" not in message.split(
            "expected")[0]
        assert "export the sheet as CSV" in message and "CSV UTF-8" in message
    code = cli.main(["fit", str(path), "-o", str(tmp_path / "c.json")])
    assert code == cli.EXIT_INPUT and not (tmp_path / "c.json").exists()


def test_a_folder_of_workbooks_says_they_are_not_read(tmp_path):
    (tmp_path / "runs").mkdir()
    workbook(tmp_path / "runs" / "a.xlsx")
    message = error_of(polyjudge.read_runs, tmp_path / "runs")
    assert "spreadsheet workbooks, which are not read: export them as CSV" in message


# --- item 5: unbalanced panels -------------------------------------------------------------------

def one_judge_language(runs: pd.DataFrame) -> pd.DataFrame:
    """L3 judged by B1 only: the cells (L3, B2) and (L3, B3) have no task at all."""
    return runs[~((runs["lang"] == "L3") & (runs["judge"] != "B1"))]


def test_a_language_judged_by_one_judge_names_its_cells_and_a_fix_that_works():
    runs = one_judge_language(categorical_runs(n_languages=3))
    for missing in ("error", "omit"):
        message = error_of(polyjudge.calibrate, runs, **USER, missing=missing)
        assert "(L3, B2), (L3, B3)" in message and "missing: omit" not in message
        assert "remove the runs of language(s) ['L3']" in message
        assert "backbone(s)" not in message  # removing B2 and B3 would leave one backbone
    fixed = runs[runs["lang"] != "L3"]  # the fix offered
    assert polyjudge.calibrate(fixed, **USER).panel.languages == ("L1", "L2")


def test_a_method_that_cannot_run_is_a_row_with_its_reason_and_a_log_line(caplog):
    runs = one_judge_language(categorical_runs(n_languages=3))
    with caplog.at_level("WARNING", logger="polyjudge.analyses.heldout"):
        result = polyjudge.heldout(runs, **USER, missing="omit", replicates=20)
    tau = result.tau.set_index("method")
    assert list(tau.index) == list(polyjudge.analyses.baselines.METHODS)
    empty = tau[tau["n_replicates"] == 0]
    assert {"CBC", "Oracle", "ComBat"} <= set(empty.index)
    assert (empty["reason"] != "").all() and (
        tau.loc[tau["n_replicates"] > 0, "reason"] == "").all()
    assert "(L3, B2), (L3, B3) have no task" in empty.loc["CBC", "reason"]
    assert "remove the runs of language(s) ['L3']" in empty.loc["CBC", "reason"]
    assert empty.loc["Dawid-Skene (requirement)", "reason"].startswith("not run: no requirement")
    logged = caplog.text
    assert all(f"held-out tau of {name}: " in logged for name in empty.index)


# --- item 6: methods that silently do not apply -------------------------------------------------

def ten_point_runs() -> pd.DataFrame:
    """Ratings 1-10 (integers), with repeated runs: the Dawid-Skene protocol's "score 100"
    verdict never happens on this scale."""
    runs = categorical_runs(n_languages=3)
    return runs.assign(rating=np.clip(np.round(runs["rating"] / 10), 1, 10))


def test_dawid_skene_on_a_ten_point_scale_says_why_and_the_threshold_makes_it_run(tmp_path):
    runs = ten_point_runs()
    default = polyjudge.heldout(runs, **USER, methods=["Raw", "CBC", "Dawid-Skene"], replicates=20)
    row = default.tau.set_index("method").loc["Dawid-Skene"]
    assert row["n_replicates"] == 0 and np.isnan(row["mean"])
    assert "every run is a fail" in row["reason"] and "verdict_threshold" in row["reason"]
    assert default.skipped == ("Dawid-Skene",)
    # the figure prints the reason where the value would be
    figure = default.plot()
    texts = [t.get_text() for t in figure.axes[0].texts]
    assert any(t.startswith("not run: every run is a fail") for t in texts)
    # the fix offered: a threshold on the panel's scale
    fixed = polyjudge.heldout(runs, **USER, methods=["Raw", "CBC", "Dawid-Skene"], replicates=20,
                             verdict_threshold=7)
    row = fixed.tau.set_index("method").loc["Dawid-Skene"]
    assert row["n_replicates"] > 0 and np.isfinite(row["mean"]) and row["reason"] == ""


# --- item 2: fuzzing the reader: no input reaches a user as a traceback --------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

CELLS = st.sampled_from(["", "NA", "null", "abc", "1e400", "-5", "inf", "nan", "7", "100", "1e-3",
                         " en ", "日本", '"', ",", ";", "\t", "0x10", "true", "[1]"])


def seed_table() -> pd.DataFrame:
    """A valid run table small enough to mutate: 3 tasks x 2 languages x 2 backbones x 2 runs."""
    rows = [{"task": f"t{t}", "language": lang, "backbone": bb, "framework": f"f{f}",
             "score": float(7 * t + 3 * f + (lang == "de") * 11 + (bb == "b") * 5
                            + (lang == "de" and bb == "b") * 9)}
            for t in range(3) for lang in ("en", "de") for bb in ("a", "b") for f in range(2)]
    return pd.DataFrame(rows)


def test_exactly_additive_scores_calibrate_to_zero_beta():
    """The fuzz test's first find: beta = 0 divided the radius by zero."""
    runs = seed_table().assign(score=lambda t: t["score"] - 9.0 * ((t["language"] == "de")
                                                                  & (t["backbone"] == "b")))
    result = polyjudge.calibrate(runs)
    assert np.allclose(result.beta["beta"], 0, atol=1e-12)
    assert result.summary["tasks_for_radius_below_half_max_beta"] is None


@pytest.mark.parametrize("first", ["null", "[1, 2]", "7"])
def test_a_json_lines_file_starting_with_a_non_record_names_the_line(tmp_path, first):
    """The fuzz test's second find: pyarrow's JSON reader crashed the process (SIGSEGV) on a
    first line `null`; such a file is read by the Python reader, which names the line."""
    path = tmp_path / "runs.jsonl"
    records = "\n".join(json.dumps(r) for r in seed_table().to_dict("records"))
    path.write_text(f"{first}\n{records}\n")
    message = error_of(polyjudge.read_runs, path)
    assert f"{path}: line 1 is a JSON " in message and "not an object" in message


@st.composite
def mutated_csv(draw) -> bytes:
    lines = seed_table().to_csv(index=False).splitlines()
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["cell", "drop_line", "copy_line", "drop_column", "header",
                                     "cut", "bytes", "keep_language"]))
        row = draw(st.integers(0, len(lines) - 1)) if lines else 0
        if kind == "cell" and lines:
            cells = lines[row].split(",")
            cells[draw(st.integers(0, len(cells) - 1))] = draw(CELLS)
            lines[row] = ",".join(cells)
        elif kind == "drop_line" and lines:
            del lines[row]
        elif kind == "copy_line" and lines:
            lines.insert(row, lines[draw(st.integers(0, len(lines) - 1))])
        elif kind == "drop_column":
            column = draw(st.integers(0, 4))
            lines = [",".join(c for i, c in enumerate(line.split(",")) if i != column)
                     for line in lines]
        elif kind == "header" and lines:
            names = lines[0].split(",")
            names[draw(st.integers(0, len(names) - 1))] = draw(st.sampled_from(
                ["taks", "", "score", "Language", "task "]))
            lines[0] = ",".join(names)
        elif kind == "keep_language":  # a monolingual pilot (or one backbone)
            keep = draw(st.sampled_from([",en,", ",de,", ",a,", ",b,"]))
            lines = lines[:1] + [line for line in lines[1:] if keep in line]
        elif kind == "cut":
            text = "\n".join(lines)
            lines = text[:draw(st.integers(0, len(text)))].split("\n")
        elif kind == "bytes":
            return ("\n".join(lines) + "\n").encode() + draw(st.binary(min_size=1, max_size=8))
    return ("\n".join(lines) + "\n").encode()


@st.composite
def mutated_jsonl(draw) -> bytes:
    records = seed_table().to_dict("records")
    values = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                       st.floats(allow_nan=True, allow_infinity=True), CELLS,
                       st.lists(st.integers(), max_size=2), st.just({"a": 1}))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["value", "drop_key", "drop_record", "keep_language"]))
        i = draw(st.integers(0, len(records) - 1)) if records else 0
        key = draw(st.sampled_from(list(seed_table().columns)))
        if kind == "value" and records:
            records[i][key] = draw(values)
        elif kind == "drop_key" and records:
            records[i].pop(key, None)
        elif kind == "drop_record" and records:
            del records[i]
        elif kind == "keep_language":
            keep = draw(st.sampled_from(["en", "a"]))
            records = [r for r in records if keep in (r.get("language"), r.get("backbone"))]
    lines = [json.dumps(r) for r in records]
    if lines and draw(st.booleans()):
        lines[draw(st.integers(0, len(lines) - 1))] = draw(st.sampled_from(
            ["{not json", "", "[1, 2]", '{"task": ', "null"]))
    return ("\n".join(lines) + "\n").encode()


def read_and_calibrate(path, **options) -> str:
    """read_runs + calibrate: 'read' or 'stopped' (an InputError); anything else escapes."""
    try:
        polyjudge.calibrate(polyjudge.read_runs(path, **options))
    except InputError:
        return "stopped"
    return "read"


FUZZ = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


@FUZZ
@given(data=mutated_csv(), omit=st.booleans())
def test_mutated_csv_files_read_or_stop_with_a_message(tmp_path, data, omit):
    path = tmp_path / "runs.csv"
    path.write_bytes(data)
    assert read_and_calibrate(path, missing="omit" if omit else "error",
                              score_range=[0, 100]) in ("read", "stopped")


@FUZZ
@given(data=mutated_jsonl())
def test_mutated_json_lines_read_or_stop_with_a_message(tmp_path, data):
    path = tmp_path / "runs.jsonl"
    path.write_bytes(data)
    assert read_and_calibrate(path) in ("read", "stopped")


# --- the workflow: the same panels as a user's config ------------------------------------------

@pytest.mark.slow
def test_workflow_filtered_categoricals_one_language_and_an_unbalanced_panel(tmp_path):
    """One run of three panels: a filtered categorical Parquet file is read as its rows
    (item 1); a monolingual panel skips cbc, saying what CBC needs, and what still runs
    (cell_means.csv) is built (item 2; tests/test_panel_shape.py has every shape); an
    unbalanced panel's heldout/tau.csv gives every method without a value its reason, also in
    the log (item 5)."""
    import yaml
    from test_workflow import snakemake
    data = tmp_path / "data"
    data.mkdir()
    filtered(categorical_runs()).to_parquet(data / "filtered.parquet")
    runs = categorical_runs(n_languages=3)
    runs[runs["lang"] == "L1"].to_csv(data / "mono.csv", index=False)
    one_judge_language(runs).to_csv(data / "unbalanced.csv", index=False)
    panel = {"kind": "judge_runs", "columns": USER, "score_range": [0, 100]}
    config = {"data_dir": str(data), "heldout": {"replicates": 20},
              "simulation": {"scenarios": {}},
              "panels": {"filtered": {**panel, "runs": "filtered.parquet", "analyses": ["cbc"]},
                         "mono": {**panel, "runs": "mono.csv", "analyses": ["cbc"]},
                         "unbalanced": {**panel, "runs": "unbalanced.csv", "missing": "omit",
                                        "analyses": ["heldout"]}}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    result = snakemake(tmp_path, "results/filtered/cbc/beta.csv", "results/mono/cbc/beta.csv",
                       "results/mono/cell_means.csv", "results/unbalanced/heldout/tau.csv",
                       "--configfile", "config.yaml")
    out, results = result.stdout + result.stderr, tmp_path / "results"
    beta = pd.read_csv(results / "filtered" / "cbc" / "beta.csv")
    assert sorted(beta["language"].unique()) == ["L1", "L2", "L3"]
    assert sorted(beta["backbone"].unique()) == ["B1", "B2"]
    log = (results / "mono" / "logs" / "cbc.log").read_text()
    assert "panel 'mono': analysis 'cbc' skipped: needs at least 2 languages and 2 " \
        "backbones" in log, log
    assert "1 language (L1)" in log and "unexpected error" not in log
    assert "panel 'mono': still runs: " in (results / "mono" / "logs" / "ingest.log").read_text()
    skipped = pd.read_csv(results / "mono" / "cbc" / "beta.csv")
    assert list(skipped.columns) == ["analysis", "skipped"] and "1 language (L1)" in \
        skipped["skipped"][0]
    cells = pd.read_csv(results / "mono" / "cell_means.csv")  # the fix the message offers
    assert set(cells["language"]) == {"L1"} and len(cells) == 3
    tau = pd.read_csv(results / "unbalanced" / "heldout" / "tau.csv", keep_default_na=False)
    empty = tau[tau["n_replicates"] == 0]
    assert {"CBC", "Oracle", "ComBat"} <= set(empty["method"]) and (empty["reason"] != "").all()
    assert empty["reason"].str.contains(r"\(L3, B2\), \(L3, B3\) have no task").any()
    log = (results / "unbalanced" / "logs" / "heldout.log").read_text()
    assert "held-out tau of CBC: no defined tau" in log
    assert "unexpected error" not in out


@pytest.mark.slow
def test_workflow_reversed_score_range_stops_at_start_up(tmp_path):
    """Before any job or input function: a dry run stops on the panel's score_range, and
    names the missing `runs:` path beside it, with where it was looked for (one start-up
    message listing both; tests/test_missing_sources.py)."""
    (tmp_path / "data").mkdir()
    config = {"data_dir": "data", "simulation": {"scenarios": {}},
              "panels": {"mine": {"kind": "judge_runs", "runs": "nodir", "analyses": ["cbc"],
                                  "score_range": [10, 1]}}}
    result = dry_run_in(tmp_path, config, "config.yaml")
    out = result.stdout + result.stderr
    assert result.returncode != 0 and "nothing was run" in out
    assert "panel 'mine': score_range [10, 1] has low >= high" in out and "[1, 10]" in out
    assert f"panel 'mine': `runs`: data/nodir: file or folder not found (looked for " \
        f"{tmp_path / 'data' / 'nodir'})" in out
    assert "InputFunctionException" not in out and "Traceback" not in out  # before the DAG
