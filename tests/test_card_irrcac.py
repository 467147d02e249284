"""The judge card against irrCAC 0.4.4 (Gwet's AC1, Conger's = Cohen's kappa for two raters,
Fleiss' kappa, Krippendorff's alpha, with irrCAC's variance), on the shipped panels: devai per
language x judge against the DevAI human labels and among the judges, and llmbar per condition
x judge against the gold answer and among the judges. irrCAC pins scipy 1.12, pandas < 3 and
coverage < 7, so its numbers come from a venv of its own and are kept as a fixture with the
script that made them (tests/fixtures/irrcac/make.py, the pip command in its docstring).
"""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import DATA, DEVAI_DIR
from test_card import DEVAI_REFERENCE

import polyjudge
from polyjudge.analyses.card import (choice_verdicts, judge_card, reference_labels,
                                     requirement_verdicts)
from polyjudge.analyses.judge_ls import load_llmbar

FIXTURE = Path(__file__).parent / "fixtures" / "irrcac" / "irrcac.csv"
KEYS = ["language", "judge", "versus", "measure"]


@pytest.fixture(scope="module")
def panels():
    labels = pd.read_parquet(DATA / DEVAI_REFERENCE["file"])
    reference, _ = reference_labels(labels, DEVAI_REFERENCE, "labels.parquet")
    verdicts = requirement_verdicts(pd.read_parquet(DEVAI_DIR / "requirement_judgments.parquet"))
    stored = DATA / "llmbar" / "llmbar_judge_verdicts_long.parquet"
    pairwise, gold = choice_verdicts(polyjudge.judge_ls(load_llmbar(stored),
                                                        reference="Vanilla").choices)
    return {"devai": (verdicts, reference), "llmbar": (pairwise, gold)}


def joined(panel, card):
    peer = pd.read_csv(FIXTURE)
    peer = peer[peer["panel"] == panel]
    both = peer.merge(card.agreement, on=KEYS, suffixes=("_irrcac", ""))
    assert len(both) == len(peer)  # every irrCAC number has its row on the card
    return both


@pytest.mark.parametrize("panel", ["devai", "llmbar"])
def test_point_estimates_equal_irrcac(panels, panel):
    verdicts, reference = panels[panel]
    both = joined(panel, judge_card(verdicts, reference, replicates=0))
    assert set(both["measure"]) == {"gwet_ac1", "cohen_kappa", "krippendorff_alpha_nominal",
                                    "fleiss_kappa"}
    rounded, exact = both[both["digits"] == 5], both[both["digits"] == 15]
    assert len(rounded) == len(exact) == {"devai": 160, "llmbar": 219}[panel]
    # irrCAC's default prints five decimals (rounded half to even): equal to that precision
    assert np.allclose(rounded["estimate"].round(5), rounded["estimate_irrcac"], rtol=0,
                       atol=1.0001e-5)
    assert (rounded["estimate"] - rounded["estimate_irrcac"]).abs().max() <= 5e-6 + 1e-12
    # and unrounded (digits=15) to 1e-9
    assert np.allclose(exact["estimate"], exact["estimate_irrcac"], rtol=0, atol=1e-9)


def test_interval_widths_match_irrcacs_variance_unless_clustered(panels):
    # irrCAC's interval is t(n - 1) x its linearised standard error, subjects independent;
    # with each item its own cluster the card's bootstrap widths agree with it within 15%
    # (mean ratio within 5%); resampling DevAI's tasks (a task's requirements together) widens
    # them: the requirements of a task are not independent (docs/methods.md section 11)
    verdicts, reference = panels["devai"]
    items = judge_card(verdicts.drop(columns="cluster"), reference, replicates=500, seed=2)
    tasks = judge_card(verdicts, reference, replicates=500, seed=2)
    ratio = {}
    for name, card in (("items", items), ("tasks", tasks)):
        both = joined("devai", card)
        both = both[both["digits"] == 15]
        ratio[name] = ((both["ci_high"] - both["ci_low"])
                       / (both["ci_high_irrcac"] - both["ci_low_irrcac"]))
    assert ratio["items"].between(0.85, 1.15).all() and abs(ratio["items"].mean() - 1) < 0.05
    assert ratio["tasks"].mean() > 1.15 and (ratio["tasks"] > 0.9).all()
