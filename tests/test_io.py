"""Ingest and validation: every kind of bad input gives one clear message."""
import numpy as np
import pandas as pd
import pytest
from conftest import DEVAI_BACKBONES, DEVAI_DIR, DEVAI_LANGUAGES

from polyjudge.data import io
from polyjudge.data.errors import InputError
from polyjudge.data.panel import Panel


def small_runs(n_tasks=3, languages=("en", "zh"), backbones=("a", "b"), frameworks=("f1", "f2")):
    rows = [(f"t{t}", l, b, f, 10.0 * t + i) for t in range(1, n_tasks + 1) for l in languages
            for i, b in enumerate(backbones) for f in frameworks]
    return pd.DataFrame(rows, columns=io.RUN_COLUMNS)


def test_build_panel_averages_frameworks_and_keeps_order():
    runs = small_runs()
    runs.loc[runs["framework"] == "f2", "score"] += 2.0
    panel = io.build_panel(runs, "x.csv", languages=["zh", "en"], backbones=None)
    assert panel.languages == ("zh", "en") and panel.backbones == ("a", "b")
    assert panel.tasks == ("t1", "t2", "t3")
    assert panel.values[0, 0, 0] == pytest.approx(11.0)
    assert (panel.n_runs == 2).all()


def test_natural_task_order():
    assert sorted(["t10", "t2", "t1"], key=io.natural_key) == ["t1", "t2", "t10"]


def test_panel_frame_round_trip():
    panel = io.build_panel(small_runs(), "x")
    again = Panel.from_frame(panel.to_frame())
    np.testing.assert_array_equal(again.values, panel.values)
    assert (again.tasks, again.languages, again.backbones) == (panel.tasks, panel.languages,
                                                               panel.backbones)


def test_missing_column_names_the_file_and_the_columns(tmp_path):
    path = tmp_path / "runs.csv"
    small_runs().drop(columns="framework").to_csv(path, index=False)
    with pytest.raises(InputError, match=r"runs\.csv: missing column\(s\) \['framework'\]"):
        io.read_table(path, io.RUN_COLUMNS)


def test_columns_mapping_renames_user_names(tmp_path):
    path = tmp_path / "runs.csv"
    small_runs().rename(columns={"score": "pct", "backbone": "judge"}).to_csv(path, index=False)
    renamed = io.read_table(path, io.RUN_COLUMNS, mapping={"score": "pct", "backbone": "judge"})
    assert list(renamed.columns) == io.RUN_COLUMNS


@pytest.mark.parametrize("bad, message", [
    ("abc", "non-numeric score"),
    (150.0, r"outside \[0, 100\]"),
    (np.inf, "infinite"),
    (np.nan, r"missing \(NaN\) score"),
])
def test_bad_scores_are_named_with_their_row(bad, message):
    runs = small_runs().astype({"score": object})
    runs.loc[4, "score"] = bad
    with pytest.raises(InputError, match=message) as info:
        io.validate_runs(runs, "runs.csv", score_range=(0, 100))
    text = str(info.value)
    assert text.startswith("runs.csv:") and "expected:" in text
    assert "\n    6 " in text or "\n    6  " in text  # file row 6 = data row 4 + header


def test_nan_scores_can_be_omitted_by_panel_setting():
    runs = small_runs()
    runs.loc[0, "score"] = np.nan
    clean = io.validate_runs(runs, "runs.csv", missing="omit")
    assert len(clean) == len(runs) - 1


def test_duplicate_keys_and_empty_labels():
    runs = pd.concat([small_runs(), small_runs().iloc[[3]]])
    with pytest.raises(InputError, match="2 rows share the same"):
        io.validate_runs(runs, "runs.csv")
    runs = small_runs()
    runs.loc[2, "language"] = " "
    with pytest.raises(InputError, match="column 'language' is empty in 1 row"):
        io.validate_runs(runs, "runs.csv")


def test_unbalanced_panel_lists_the_missing_cells():
    runs = small_runs()
    runs = runs[~((runs["task"] == "t2") & (runs["language"] == "zh") & (runs["backbone"] == "b"))]
    with pytest.raises(InputError, match="unbalanced panel: 1 of 12") as info:
        io.build_panel(runs, "runs.csv")
    assert "t2" in str(info.value) and "zh" in str(info.value)
    panel = io.build_panel(runs, "runs.csv", allow_missing_cells=True)
    assert np.isnan(panel.values[1, 1, 1]) and np.isfinite(panel.values).sum() == 11


def test_configured_language_without_runs_and_unlisted_backbone():
    runs = small_runs()
    configured = r"language\(s\) \['fr'\] are configured but have no runs"
    with pytest.raises(InputError, match=configured):
        io.build_panel(runs, "runs.csv", languages=["en", "zh", "fr"])
    with pytest.raises(InputError, match=r"backbone\(s\) \['b'\] have runs but are not"):
        io.build_panel(runs, "runs.csv", backbones=["a"])


def test_requirements_recompute_run_scores_and_must_agree():
    requirements = pd.DataFrame({
        "task": ["t1"] * 4, "language": ["en"] * 4, "backbone": ["a"] * 4,
        "framework": ["f"] * 4, "requirement_id": [0, 1, 2, 3], "category": ["c"] * 4,
        "satisfied": [1, 0, 1, 1]})
    runs = io.runs_from_requirements(requirements, "req.csv")
    assert runs["score"].tolist() == [75.0]
    given = runs[io.RUN_COLUMNS].assign(score=50.0)
    with pytest.raises(InputError, match="1 run\\(s\\) disagree"):
        io.check_runs_agree(given, runs, "runs.csv")
    requirements.loc[1, "satisfied"] = 2
    with pytest.raises(InputError, match="not 0/1"):
        io.runs_from_requirements(requirements, "req.csv")


def test_devai_requirements_reproduce_the_run_table():
    requirements = io.read_table(DEVAI_DIR / "requirement_judgments.parquet")
    recomputed = io.runs_from_requirements(requirements, "req")
    runs = io.validate_runs(io.read_table(DEVAI_DIR / "run_level_scores.parquet"), "runs")
    io.check_runs_agree(runs, recomputed, "runs")
    panel = io.build_panel(runs, "runs", DEVAI_LANGUAGES, DEVAI_BACKBONES)
    assert panel.shape == (55, 8, 6) and panel.is_complete and (panel.n_runs == 3).all()


def test_preference_margins_keep_missing_as_nan_and_strata(tmp_path):
    rows = pd.DataFrame({"item_numeric_id": [0, 1, 0, 1], "subset": ["easy", "hard"] * 2,
                         "language": ["en", "en", "zh", "zh"], "chosen_score": [4, 5, 3, None],
                         "rejected_score": [3, 1, 3, 2]})
    rows.to_csv(tmp_path / "e1.csv", index=False)
    rows.assign(chosen_score=[5, 5, 5, 5]).to_csv(tmp_path / "e2.csv", index=False)
    runs = io.load_preference_margins({"e1": "e1.csv", "e2": "e2.csv"}, tmp_path)
    assert runs["score"].isna().sum() == 1
    clean = io.validate_runs(runs, "margins", score_range=None, missing="omit")
    panel = io.build_panel(clean, "margins", allow_missing_cells=True)
    assert panel.strata == ("easy", "hard")
    assert np.isnan(panel.values[1, 1, 0]) and panel.values[0, 0, 0] == 1.0


def test_unreadable_and_absent_files(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        io.read_table(tmp_path / "nope.csv")
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    with pytest.raises(InputError, match="cannot be read as a table"):
        io.read_table(bad)
