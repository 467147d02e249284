"""The label plan (polyjudge.analyses.labels.plan): predictions from a run table, the loop of
batches on a planted panel, and the checks of a labels table."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from polyjudge.analyses.labels import plan
from polyjudge.analyses.labels.synthetic import planted_items
from polyjudge.data.errors import InputError


def planted_runs(n_items=600, languages=("en", "sw"), seed=0):
    rng = np.random.default_rng(seed)
    runs, truth = [], {}
    for lang in languages:
        labels, scores = planted_items(rng, n_items, 4, "binary", "medium", "concentrated")
        truth[lang] = pd.Series(labels, index=[f"t{i}" for i in range(n_items)])
        for j in range(scores.shape[1]):
            runs.append(pd.DataFrame({"task": truth[lang].index, "language": lang,
                                      "backbone": f"judge{j}", "score": scores[:, j]}))
    return pd.concat(runs, ignore_index=True), truth


def test_item_predictions_match_pandas_with_repeated_runs():
    rng = np.random.default_rng(1)
    runs = pd.DataFrame({"task": rng.choice(list("abcde"), 300),
                         "language": rng.choice(["x", "y"], 300),
                         "backbone": rng.choice(["j1", "j2", "j3"], 300),
                         "score": rng.random(300)})
    got = plan.item_predictions(runs).astype({"language": str})
    per_judge = runs.groupby(["task", "language", "backbone"])["score"].mean()
    grouped = per_judge.groupby(["task", "language"])
    want = pd.DataFrame({"prediction": grouped.mean(), "spread": grouped.std(ddof=0)})
    got = got.set_index(["item", "language"]).sort_index()
    assert np.allclose(got[["prediction", "spread"]], want.sort_index()[["prediction",
                                                                          "spread"]])


def test_loop_never_reproposes_records_probabilities_and_stops_at_target():
    runs, truth = planted_runs()
    predictions = plan.item_predictions(runs)
    labels = pd.DataFrame(columns=["item", "language", "label", "probability"])
    seen = set()
    for _ in range(8):
        progress, batch = plan.label_plan(predictions, labels, batch=30, target_halfwidth=0.08,
                                          label_range=(0, 1), seed=3)
        assert list(batch.columns) == plan.BATCH_COLUMNS and batch["label"].isna().all()
        keys = set(zip(batch["item"], batch["language"]))
        assert not keys & seen and len(keys) == len(batch)
        seen |= keys
        assert (batch["probability"] > 0).all()
        if batch.empty:
            break
        batch["label"] = [truth[lang][item] for item, lang in zip(batch["item"],
                                                                 batch["language"])]
        labels = pd.concat([labels, batch], ignore_index=True)
    assert progress["met"].all() and (progress["next_batch"] == 0).all()
    for row in progress.itertuples():
        assert row.lower <= truth[row.language].mean() <= row.upper
        assert row.halfwidth <= 0.08
    # after the first 30 (uniform) labels, the probabilities follow the judges' spread
    later = labels.iloc[60:]
    spread = predictions.set_index(["item", "language"])["spread"]
    s = spread.loc[list(zip(later["item"], later["language"]))].to_numpy()
    assert np.corrcoef(s, later["probability"].astype(float))[0, 1] > 0.9


def test_batch_is_seeded_and_uniform_fallback():
    runs, _ = planted_runs(200)
    predictions = plan.item_predictions(runs)
    none = pd.DataFrame(columns=["item", "language", "label"])
    first = plan.label_plan(predictions, none, batch=10, seed=5)[1]
    again = plan.label_plan(predictions, none, batch=10, seed=5)[1]
    other = plan.label_plan(predictions, none, batch=10, seed=6)[1]
    pd.testing.assert_frame_equal(first, again)
    assert not first["item"].equals(other["item"])
    assert np.allclose(first["probability"], 1 / 200)         # no labels yet: uniform
    uniform = plan.label_plan(predictions, none, batch=10, sampling="uniform")[0]
    assert (uniform["sampling"] == "uniform").all() and uniform["labels_needed"].isna().all()


def test_labels_without_probability_are_uniform_draws():
    runs, truth = planted_runs(300)
    predictions = plan.item_predictions(runs)
    items = [f"t{i}" for i in range(0, 300, 5)]
    labels = pd.DataFrame({"item": items, "language": "en",
                           "label": truth["en"][items].to_numpy()})
    weighted = labels.assign(probability=1 / 300)
    a = plan.label_progress(predictions, labels)
    b = plan.label_progress(predictions, weighted)
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize("change, match", [
    ({"probability": 0.0}, "outside"),
    ({"probability": 1.5}, "outside"),
    ({"item": "t999"}, "does not have"),
    ({"label": "yes"}, "not numbers"),
])
def test_check_labels_names_the_row(change, match):
    runs, _ = planted_runs(20)
    predictions = plan.item_predictions(runs)
    labels = pd.DataFrame({"item": ["t1", "t2", "t3"], "language": "en", "label": [1, 0, 1],
                           "probability": [0.05, 0.05, 0.05]}, dtype=object)
    for column, value in change.items():
        labels.loc[1, column] = value
    with pytest.raises(InputError, match=match) as error:
        plan.check_labels(labels, predictions, "labels.csv")
    assert "labels.csv" in str(error.value)
    assert str(labels.loc[1, "item"]) in str(error.value)      # the row is shown


def test_check_labels_duplicates_and_blank_rows():
    runs, _ = planted_runs(20)
    predictions = plan.item_predictions(runs)
    twice = pd.DataFrame({"item": ["t1", "t1"], "language": "en", "label": [1, 0]})
    with pytest.raises(InputError, match="same item twice"):
        plan.check_labels(twice, predictions, "labels.csv")
    two_annotators = twice.assign(annotator=["ann", "bob"])
    assert len(plan.check_labels(two_annotators, predictions, "labels.csv")) == 2
    blank = pd.DataFrame({"item": ["t1", "t2"], "language": "en", "label": [1, None]})
    assert list(plan.check_labels(blank, predictions, "labels.csv")["item"]) == ["t1"]
