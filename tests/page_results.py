"""Small results folders for the results-page tests (tests/test_page*.py).

``make_results(root)`` copies the committed default-run snapshot's ``devai`` panel (plus its
leaderboard, computed here with 200 replicates since the snapshot predates it), the
``judge_ls_synthetic`` Judge-LS tables and ``claims.csv``, and adds a planted score panel
``labels`` whose language and backbone names are non-Latin text and markup, with every file the
page reads written by the package's own functions.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from polyjudge.analyses.leaderboard import leaderboard
from polyjudge.api import calibrate_panel
from polyjudge.cbc.band import bootstrap_band
from polyjudge.data import io
from polyjudge.data.panel import Panel

SNAPSHOT = Path(__file__).resolve().parent / "output_snapshot" / "results"
MARKUP = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>window.__xss=1</script>"
LANGUAGES = ("中文", "हिन्दी", "العربية", MARKUP)
BACKBONES = (SCRIPT, "ジャッジ", "judge <b>bold</b>")
DEVAI_FILES = ("tensor.parquet", "cbc/beta.csv", "cbc/bands.csv", "cbc/bands.json",
               "cbc/rankings.csv", "cbc/summary.json", "cbc/calibrated_tensor.parquet",
               "heldout/tau.csv", "heldout/paired.csv", "heldout/decisions.json",
               "reversal/pairs.csv", "reversal/summary.json", "information/cmi.json")
JUDGE_LS_FILES = ("accuracy.csv", "flips.csv", "position.csv")


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def labels_panel(root: Path) -> None:
    """A 12 task x 4 language x 3 backbone panel with planted beta and markup labels."""
    rng = np.random.default_rng(3)
    beta = np.array([[4.0, -2.0, -2.0], [-3.0, 1.0, 2.0], [1.0, 0.5, -1.5], [-2.0, 0.5, 1.5]])
    values = (50 + rng.normal(0, 5, (12, 1, 1)) + np.array([6.0, 0.0, -6.0]) + beta
              + rng.normal(0, 1, (12, 4, 3)))
    panel = Panel(values, tuple(f"t{i:02d}" for i in range(12)), LANGUAGES, BACKBONES)
    out = root / "labels"
    (out / "cbc").mkdir(parents=True)
    result = calibrate_panel(panel, n_runs=panel.values.size, r2=(0.9, 0.95))
    panel.to_frame().to_parquet(out / "tensor.parquet", index=False)
    result.beta.to_csv(out / "cbc" / "beta.csv", index=False)
    result.rankings.to_csv(out / "cbc" / "rankings.csv", index=False)
    result.calibrated.to_parquet(out / "cbc" / "calibrated_tensor.parquet", index=False)
    (out / "cbc" / "summary.json").write_text(json.dumps(result.summary, default=str))
    bootstrap_band(panel, 200, 0).frame.to_csv(out / "cbc" / "bands.csv", index=False)
    leaderboard(panel, n_replicates=200).to_csv(out / "cbc" / "leaderboard.csv", index=False)


def make_results(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for relative in DEVAI_FILES:
        _copy(SNAPSHOT / "devai" / relative, root / "devai" / relative)
    panel = io.read_panel(root / "devai" / "tensor.parquet")
    leaderboard(panel, n_replicates=200).to_csv(root / "devai" / "cbc" / "leaderboard.csv",
                                                index=False)
    for name in JUDGE_LS_FILES:
        _copy(SNAPSHOT / "judge_ls_synthetic" / "judge_ls" / name,
              root / "judge_ls_synthetic" / "judge_ls" / name)
    _copy(SNAPSHOT / "claims.csv", root / "claims.csv")
    labels_panel(root)
    return root


def plant_change(root: Path, language="Spanish", backbone="gpt-4o", claim="beta_matrix"):
    """Shift one beta cell of ``devai`` by 0.5 and flip one claim's status; returns both."""
    beta = pd.read_csv(root / "devai" / "cbc" / "beta.csv")
    cell = (beta["language"] == language) & (beta["backbone"] == backbone)
    assert cell.sum() == 1
    beta.loc[cell, "beta"] += 0.5
    beta.to_csv(root / "devai" / "cbc" / "beta.csv", index=False)
    claims = pd.read_csv(root / "claims.csv", keep_default_na=False)
    row = claims["id"] == claim
    claims.loc[row, "status"] = "differs" if claims.loc[row, "status"].item() != "differs" \
        else "reproduced"
    claims.to_csv(root / "claims.csv", index=False)
    return (language, backbone), claim


def unusable_condition(root: Path) -> Path:
    """A results folder with one Judge-LS panel ``ls`` whose ``zh`` condition has no usable
    judgment (every verdict unparseable), the local judge example's shape; returns the folder."""
    from polyjudge.analyses import judge_ls as jl
    verdicts, _ = jl.simulate_judge_ls(seed=1, n_items=30)
    verdicts.loc[verdicts["condition"] == "zh", "verdict"] = "I cannot decide."
    folder = root / "ls" / "judge_ls"
    folder.mkdir(parents=True)
    choices = jl.normalise_choices(verdicts)
    jl.accuracy_table(choices).to_csv(folder / "accuracy.csv", index=False)
    jl.flip_table(choices, "en").to_csv(folder / "flips.csv", index=False)
    jl.position_table(choices).to_csv(folder / "position.csv", index=False)
    return root
