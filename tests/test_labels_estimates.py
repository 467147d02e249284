"""Estimates per language and system (polyjudge.analyses.labels): planted panels, the
predictors, the draw of a subset of labels, the differences and the judges' errors."""
import numpy as np
import pandas as pd
import pytest
from scipy.special import ndtri

from polyjudge.analyses.labels import (by_language, cross_fit, fixed_predictors,
                                       label_estimates, panel_predictions, sample_labels)


def planted(shift=0.0, seed=0, items=300):
    """Two systems, two languages, three judges: judge j scores label + j/10 - 0.1, plus
    ``shift`` in language 'b' for every judge."""
    rng = np.random.default_rng(seed)
    label = (rng.random(items) < np.where(np.arange(items) < items // 2, 0.3, 0.7)).astype(float)
    rows = [(str(i), lang, f"j{j}", label[i] + j / 10 - 0.1 + (shift if lang == "b" else 0))
            for i in range(items) for lang in ("a", "b") for j in range(3)]
    predictions = pd.DataFrame(rows, columns=["item", "language", "judge", "prediction"])
    systems = pd.Series(np.where(np.arange(items) < items // 2, "s1", "s2"),
                        index=[str(i) for i in range(items)])
    labels = pd.DataFrame({"item": [str(i) for i in range(items) for _ in "ab"],
                           "language": ["a", "b"] * items, "label": np.repeat(label, 2)})
    return predictions, systems, labels, label


def test_a_shared_shift_moves_cbc_but_not_ppi():
    predictions, systems, labels, label = planted(shift=0.2)
    used = sample_labels(labels, systems, 40, seed=1)
    out = label_estimates(predictions, used, systems, label_range=(0, 1), all_labels=labels)
    table = out.estimates.set_index(["language", "system", "estimator", "predictor"])
    for system, truth in (("s1", label[:150].mean()), ("s2", label[150:].mean())):
        assert table.loc[("a", system, "cbc", "cbc"), "estimate"] == pytest.approx(truth)
        assert table.loc[("b", system, "cbc", "cbc"), "estimate"] == pytest.approx(truth + 0.2)
        assert table.loc[("b", system, "all_labels", ""), "estimate"] == pytest.approx(truth)
        for predictor in ("panel", "cbc", "crossfit", "judge:j2"):
            row = table.loc[("b", system, "ppi", predictor)]
            # a predictor exact up to a constant: PPI recovers the mean exactly
            assert row["estimate"] == pytest.approx(truth, abs=1e-9)
            assert row["ci_low"] <= truth <= row["ci_high"]
            assert row["n_labels"] == 40 and row["n_items"] == 150
    human = table.loc[("a", "s1", "human_only", "")]
    assert human["lam"] == 0 and human["n_labels"] == 40


def test_differences_are_bonferroni_over_a_languages_pairs():
    predictions, systems, labels, _ = planted()
    out = label_estimates(predictions, sample_labels(labels, systems, 30, seed=2), systems,
                          kinds=("panel",))
    est = out.estimates.set_index(["language", "system", "estimator", "predictor"])
    row = out.differences.query("language == 'a' and estimator == 'human_only'").iloc[0]
    a, b = est.loc[("a", "s1", "human_only", "")], est.loc[("a", "s2", "human_only", "")]
    assert row["pairs"] == 1 and row["difference"] == pytest.approx(a.estimate - b.estimate)
    half = ndtri(0.975) * np.hypot(a.se, b.se)
    assert row["ci_high"] - row["difference"] == pytest.approx(half)


def test_judge_errors_recover_a_planted_bias():
    predictions, systems, labels, _ = planted()
    out = label_estimates(predictions, sample_labels(labels, systems, 50, seed=3), systems)
    errors = out.judge_errors.set_index(["language", "judge", "measure"])["estimate"]
    assert errors[("a", "j0", "bias")] == pytest.approx(-0.1)
    assert errors[("a", "j2", "mae")] == pytest.approx(0.1)
    assert errors[("b", "j1", "bias")] == pytest.approx(0.0, abs=1e-12)


def test_cbc_equals_the_panel_mean_unless_a_judge_is_missing():
    predictions, _, _, _ = planted(shift=0.3)
    lenient = (predictions["judge"] == "j2") & (predictions["language"] == "b")
    predictions.loc[lenient, "prediction"] += 0.2  # a language x judge interaction
    panel = by_language(predictions)["b"]
    got = fixed_predictors(panel, ("panel", "cbc"))
    np.testing.assert_allclose(got["cbc"], got["panel"])
    sparse = predictions.drop(predictions.index[(predictions["judge"] == "j2")
                                                & (predictions["item"] == "0")])
    got = fixed_predictors(by_language(sparse)["b"], ("panel", "cbc"))
    assert got["cbc"][0] != pytest.approx(got["panel"][0])


def test_cross_fit_predicts_each_labelled_item_from_the_other_folds():
    rng = np.random.default_rng(4)
    matrix = rng.normal(size=(200, 3))
    y = 1 + matrix @ np.array([0.5, -1.0, 2.0])
    labelled = np.arange(0, 200, 2)
    on_all, on_labelled = cross_fit(matrix, labelled, y[labelled], folds=4)
    np.testing.assert_allclose(on_labelled, y[labelled])
    np.testing.assert_allclose(on_all, y)
    constant, _ = cross_fit(matrix, labelled[:5], y[labelled[:5]])  # too few: the mean
    assert np.all(constant == y[labelled[:5]].mean())


def test_sample_labels_draws_the_same_items_in_every_language():
    _, systems, labels, _ = planted()
    drawn = sample_labels(labels, systems, 25, seed=9)
    counts = drawn.assign(system=drawn["item"].map(systems)).groupby(["language", "system"])
    assert counts.size().tolist() == [25] * 4
    by_lang = drawn.groupby("language")["item"].apply(set)
    assert by_lang["a"] == by_lang["b"]
    assert len(sample_labels(labels, systems, 1000, seed=9)) == len(labels)
    assert not drawn.equals(sample_labels(labels, systems, 25, seed=10))


def test_panel_predictions_from_requirements_and_runs():
    requirements = pd.DataFrame({"framework": ["F", "F"], "task": ["t", "t"],
                                 "requirement_id": ["0", "1"], "language": ["en", "en"],
                                 "backbone": ["m", "m"], "satisfied": [1, 0]})
    predictions, systems = panel_predictions(requirements)
    assert predictions["item"].tolist() == ["F|t|0", "F|t|1"]
    assert systems.to_dict() == {"F|t|0": "F", "F|t|1": "F"}
    runs = requirements.drop(columns=["requirement_id", "satisfied"]).assign(score=[50, 70])
    predictions, _ = panel_predictions(runs)
    assert predictions["item"].tolist() == ["F|t", "F|t"]
    assert predictions["prediction"].tolist() == [50.0, 70.0]


def test_the_config_completes_human_labels_and_refuses_labels_without_them():
    from pathlib import Path

    from polyjudge import workflow_config
    from polyjudge.data.yamlfile import read_yaml
    repo = Path(__file__).resolve().parents[1]
    defaults = read_yaml(repo / "config/config.yaml")
    schema = read_yaml(repo / "config/schema/config.schema.yaml")
    panel = {"kind": "judge_runs", "runs": "devai_ml_aaaj/run_level_scores.parquet",
             "analyses": ["labels"]}
    done = workflow_config.complete({"panels": {"mine": dict(panel)}}, defaults)
    problems = workflow_config.problems(done, repo / "data", schema)
    assert any("analysis 'labels' needs `human_labels:`" in p for p in problems), problems
    panel["human_labels"] = {"source": "nowhere/labels.csv", "sample": 50}
    done = workflow_config.complete({"panels": {"mine": panel}}, defaults)
    spec = done["panels"]["mine"]["human_labels"]
    assert spec["sample"] == 50 and spec["annotators"] == "mean" and spec["seed"] == 0
    problems = workflow_config.problems(done, repo / "data", schema)
    assert any("`human_labels.source`" in p and "nowhere" in p for p in problems), problems


def test_the_page_section_shows_the_estimators_side_by_side(tmp_path):
    from polyjudge.report.page.labels import labels_section
    from polyjudge.report.page.results_folder import Results
    predictions, systems, labels, _ = planted(shift=0.2)
    out = label_estimates(predictions, sample_labels(labels, systems, 40, seed=1), systems,
                          label_range=(0, 1), all_labels=labels)
    folder = tmp_path / "mine" / "labels"
    folder.mkdir(parents=True)
    out.estimates.to_csv(folder / "estimates.csv", index=False)
    out.differences.to_csv(folder / "differences.csv", index=False)
    out.judge_errors.to_csv(folder / "judge_errors.csv", index=False)
    out.ranks.to_csv(folder / "ranks.csv", index=False)
    section = labels_section(Results(tmp_path), "mine")
    assert [t["id"] for t in section["tables"]] == [
        "mine.labels_estimates", "mine.labels_differences", "mine.labels_ranks",
        "mine.labels_errors"]
    ranks = section["tables"][2]
    assert {"rank_low", "rank_high"} <= set(ranks["keys"]) and len(ranks["data"]) == len(
        out.ranks)
    drawn = section["charts"][0]["spec"]["data"]["values"]
    shown = {row["shown"] for row in drawn}
    assert shown == {"all human labels", "human labels alone", "judges alone", "CBC",
                     "PPI (judges' mean)", "PPI (cross-fitted judges)"}
    assert len(drawn) == 2 * 2 * 6  # languages x systems x estimators drawn
    assert labels_section(Results(tmp_path), "other") is None
