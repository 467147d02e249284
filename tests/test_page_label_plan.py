"""The label-plan loop on the results page (polyjudge.report.page.label_plan), from the files
one turn of the plan writes into a results folder."""
from __future__ import annotations

import numpy as np
import pandas as pd

from polyjudge.analyses.labels import plan
from polyjudge.analyses.labels.synthetic import planted_items
from polyjudge.report.page.labels import labels_section
from polyjudge.report.page.results_folder import Results


def turn(tmp_path, labels, target):
    rng = np.random.default_rng(0)
    runs, truth = [], {}
    for lang in ("en", "sw"):
        label, scores = planted_items(rng, 200, 3, "binary", "good", "even")
        truth[lang] = pd.Series(label, index=[f"t{i}" for i in range(200)])
        runs += [pd.DataFrame({"task": truth[lang].index, "language": lang,
                               "backbone": f"j{j}", "score": scores[:, j]}) for j in range(3)]
    predictions = plan.item_predictions(pd.concat(runs, ignore_index=True))
    progress, batch = plan.label_plan(predictions, labels, batch=10, target_halfwidth=target,
                                      label_range=(0, 1), seed=1)
    folder = tmp_path / "mine" / "labels"
    folder.mkdir(parents=True, exist_ok=True)
    progress.to_csv(folder / "progress.csv", index=False)
    batch.to_csv(folder / "to_label.csv", index=False)
    return progress, batch, truth


def test_the_page_shows_progress_and_what_to_label_next(tmp_path):
    none = pd.DataFrame(columns=["item", "language", "label"])
    progress, batch, truth = turn(tmp_path, none, 0.05)
    section = labels_section(Results(tmp_path), "mine")
    assert section["charts"] == [] and [t["id"] for t in section["tables"]] == [
        "mine.label_plan_progress"]
    shown = section["tables"][0]
    assert shown["source"] == "mine/labels/progress.csv" and len(shown["data"]) == 2
    assert {c["key"] for c in shown["columns"]} >= {"n_labels", "ci", "labels_needed",
                                                      "next_batch"}
    row = dict(zip(shown["keys"], shown["data"][0]))
    assert row["n_labels"] == 0 and row["lower"] is None and row["next_batch"] == 10
    assert ("Next: label the 20 items results/mine/labels/to_label.csv proposes "
            "(en 10, sw 10)" in section["note"]) and "human_labels" in section["note"]

    # the lab labels the batch; a loose target (10 labels give a half-width near 0.55) is
    # met and nothing more is proposed
    batch["label"] = [truth[lang][item]
                      for item, lang in zip(batch["item"], batch["language"])]
    progress, batch, _ = turn(tmp_path, batch, 0.6)
    assert progress["met"].all() and batch.empty
    section = labels_section(Results(tmp_path), "mine")
    row = dict(zip(section["tables"][0]["keys"], section["tables"][0]["data"][0]))
    assert row["n_labels"] == 10 and row["lower"] < row["upper"] and row["met"] == "yes"
    assert "Every language's target is met" in section["note"]
    assert "Next:" not in section["note"]


def test_a_panel_without_a_label_plan_has_no_plan_part(tmp_path):
    assert labels_section(Results(tmp_path), "mine") is None
