"""The verdict at the top of a panel against the files it is computed from: the CBC sentences
on a small panel where tau takes few values (the mean outside the middle 95% of replicates) and
one pair reverses significantly beside a large global p. The browser check of the first screen
is in tests/test_page_browser_default_run.py."""
from __future__ import annotations

import numpy as np
import pandas as pd

import polyjudge
from polyjudge.report.page.verdict import consistency_sentence, reversal_sentence
from page_results import SNAPSHOT


def small_panel() -> pd.DataFrame:
    """A user's small panel: 12 tasks x 3 languages x 3 judges, one run per cell, scores 0-100,
    backbones 20 points apart with an interaction (seeded)."""
    rng = np.random.default_rng(6)
    beta = rng.normal(0, 8, (3, 3))
    return pd.DataFrame([
        {"task": f"t{t}", "language": language, "backbone": backbone, "framework": "f",
         "score": float(np.clip(50 + 20 * b + beta[l, b] + rng.normal(0, 10), 0, 100))}
        for t in range(12) for l, language in enumerate(("en", "de", "fr"))
        for b, backbone in enumerate(("a", "b", "c"))])


def test_the_cbc_verdict_on_a_small_panel_reads_as_what_it_is():
    """On a panel this small tau takes few values: the raw mean (0.55) lies below both its
    2.5 and 97.5 percentiles (0.56), and one pair reverses significantly while the global test
    gives p = 0.7. The sentences keep every number but say what each one is."""
    runs = small_panel()
    held = polyjudge.heldout(runs, methods=["Raw", "CBC"], replicates=200, seed=7)
    tau = held.tau.set_index("method")
    raw = tau.loc["Raw"]
    assert raw["mean"] < raw["ci_low"] == raw["ci_high"]  # the case a user took for a bug
    text = consistency_sentence(held.tau)
    assert "[" not in text  # no bracket that reads as an interval around the mean
    assert (f"{raw['mean']:.2f} raw, {tau.loc['CBC', 'mean']:.2f} after CBC; the middle 95% "
            f"of replicates runs from {raw['ci_low']:.2f} to {raw['ci_high']:.2f} raw") in text
    assert "mean over 200 task-bootstrap replicates" in text
    assert "The raw mean lies below that range because tau takes few values here" in text
    draws = held.replicates.loc[held.replicates["method"] == "Raw", "tau"]
    assert 0 < (draws < raw["ci_low"]).mean() <= 0.025  # "a few (at most 2.5%)"
    assert "CBC mean lies" not in text
    # where the mean is inside, no such sentence (the default devai panel)
    devai = consistency_sentence(pd.read_csv(SNAPSHOT / "devai" / "heldout" / "tau.csv"))
    assert "middle 95% of replicates" in devai and "lies" not in devai

    summary = polyjudge.reversal(runs, permutations=199).summary
    test = summary["global_test"]
    assert summary["n_significant"] == 1 and test["p_value"] > 0.5
    text = reversal_sentence(summary)
    assert text.startswith(f"In the raw scores, the leader differs between languages (2 "
                           "backbones lead somewhere), and 1 of 3 backbone pairs reverses its "
                           "order between two languages, 1 of them significantly at FDR 0.05 "
                           "(a test of each pair). ")
    assert text.endswith(
        "The global permutation test asks another question: is 1 reversing pair more than "
        f"expected without any language x backbone interaction ({test['null_mean']:.2f} on "
        f"average over permuted panels)? p = {test['p_value']:.3g}.")
