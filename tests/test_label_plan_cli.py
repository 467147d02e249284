"""`polyjudge label-plan` as a user runs it (the installed console script in a subprocess), and
the workflow's rule `label_plan` on a tiny panel: the loop of batches, labels read back, bad
labels refused with no output."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from polyjudge.analyses.labels import item_predictions, label_plan
from polyjudge.analyses.labels.synthetic import planted_items

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent / "polyjudge"
COMMAND = str(BIN) if BIN.exists() else shutil.which("polyjudge")


def polyjudge(*args, cwd):
    assert COMMAND, "the polyjudge console script is not installed (pip install -e .)"
    return subprocess.run([COMMAND, *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def write_panel(folder: Path, n_items=120) -> pd.Series:
    """runs.csv (items t0.., two languages, four judges, 0/1 verdicts) and the planted human
    labels (returned: (item, language) -> label)."""
    rng = np.random.default_rng(0)
    runs, truth = [], {}
    for lang in ("English", "Swahili"):
        labels, scores = planted_items(rng, n_items, 4, "binary", "medium", "concentrated")
        items = [f"t{i}" for i in range(n_items)]
        truth.update({(item, lang): y for item, y in zip(items, labels)})
        for j in range(4):
            runs.append(pd.DataFrame({"task": items, "language": lang, "backbone": f"judge{j}",
                                      "score": scores[:, j]}))
    pd.concat(runs).to_csv(folder / "runs.csv", index=False)
    return pd.Series(truth)


def fill(batch_file: Path, truth: pd.Series, out: Path) -> pd.DataFrame:
    """What the lab does: fill the label column of to_label.csv, save it as a labels file."""
    batch = pd.read_csv(batch_file)
    batch["label"] = [truth[(i, lang)] for i, lang in zip(batch["item"], batch["language"])]
    batch.to_csv(out, index=False)
    return batch


def test_the_loop_through_the_console_script(tmp_path):
    truth = write_panel(tmp_path)
    (tmp_path / "labels").mkdir()
    first = polyjudge("label-plan", "runs.csv", "-o", "to_label.csv", "--progress",
                      "progress.csv", "--batch", 15, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "wrote to_label.csv: 30 items to label" in first.stdout
    batch = pd.read_csv(tmp_path / "to_label.csv")
    assert list(batch.columns) == ["item", "language", "probability", "label"]
    assert batch["label"].isna().all() and np.allclose(batch["probability"], 1 / 120)
    seen = set(zip(batch["item"], batch["language"]))
    for turn in range(1, 4):
        fill(tmp_path / "to_label.csv", truth, tmp_path / "labels" / f"batch_{turn:03d}.csv")
        step = polyjudge("label-plan", "runs.csv", "--labels", "labels", "-o", "to_label.csv",
                         "--progress", "progress.csv", "--batch", 15, "--label-range", 0, 1,
                         cwd=tmp_path)
        assert step.returncode == 0, step.stderr
        batch = pd.read_csv(tmp_path / "to_label.csv")
        keys = set(zip(batch["item"], batch["language"]))
        assert not keys & seen                           # never re-proposed
        seen |= keys
    progress = pd.read_csv(tmp_path / "progress.csv")
    assert list(progress["n_labels"]) == [45, 45]
    for row in progress.itertuples():
        mean = truth[[k for k in truth.index if k[1] == row.language]].mean()
        assert row.lower <= mean <= row.upper


@pytest.mark.parametrize("rows, message", [
    ("item,language,label,probability\nt1,English,1,0\n", "probability(ies) outside (0, 1]"),
    ("item,language,label\nt999,English,1\n", "label(s) of items the panel lacks"),
    ("item,language,label\nt1,English,1\nt1,English,0\n", "second label"),
])
def test_bad_labels_stop_with_the_row_and_no_output(tmp_path, rows, message):
    write_panel(tmp_path, 20)
    (tmp_path / "labels.csv").write_text(rows)
    result = polyjudge("label-plan", "runs.csv", "--labels", "labels.csv", "-o", "next.csv",
                       cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr and "labels.csv" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "next.csv").exists()


@pytest.mark.slow
def test_the_workflow_target_reads_labels_back_and_writes_the_next_batch(tmp_path):
    """Rule label_plan on a tiny panel whose lab has labelled one batch (drawn as the first
    turn draws it): the progress counts those labels, the next batch skips them."""
    data = tmp_path / "data"
    data.mkdir()
    truth = write_panel(data, 60)
    (data / "labels").mkdir()
    predictions = item_predictions(pd.read_csv(data / "runs.csv", dtype={"task": str}))
    first = label_plan(predictions, pd.DataFrame(columns=["item", "language", "label"]),
                       batch=10)[1]
    first.to_csv(data / "to_label.csv", index=False)
    done = fill(data / "to_label.csv", truth, data / "labels" / "batch_001.csv")
    panel = {"kind": "judge_runs", "runs": "runs.csv", "score_range": [0, 1],
             "human_labels": {"source": "labels"}, "analyses": ["label_plan"]}
    config = {"data_dir": "data", "panels": {"tiny": panel}, "simulation": {"scenarios": {}},
              "label_plan": {"batch": 10, "target_halfwidth": 0.2}}
    (tmp_path / "my.yaml").write_text(yaml.safe_dump(config))
    result = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"),
                             "--cores", "2", "results/tiny/labels/to_label.csv",
                             "--configfile", "my.yaml"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    progress = pd.read_csv(tmp_path / "results/tiny/labels/progress.csv")
    assert list(progress["n_labels"]) == [10, 10]
    assert (progress["target_halfwidth"] == 0.2).all()
    batch = pd.read_csv(tmp_path / "results/tiny/labels/to_label.csv")
    assert len(batch) == 20 and batch["label"].isna().all()
    assert not set(zip(batch["item"], batch["language"])) & set(zip(done["item"],
                                                                    done["language"]))
