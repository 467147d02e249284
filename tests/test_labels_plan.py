"""The label plan (polyjudge.analyses.labels.plan): predictions from a run table and the loop of
batches on a planted panel (bad label files: tests/test_label_plan_cli.py, through the reader)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from polyjudge.analyses.labels import plan
from polyjudge.analyses.labels.synthetic import planted_items


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
