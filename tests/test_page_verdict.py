"""The verdict at the top of a panel against the files it is computed from: the Judge-LS
panels' sentences against ``judge_ls/*.csv`` (every number as the files have it, rounded as
shown), conditions without a usable judgment left out, and the CBC sentences on a small panel
where tau takes few values (the mean outside the middle 95% of replicates) and one pair reverses
significantly beside a large global p. The browser check of the first screen is in
tests/test_page_browser_default_run.py."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

import polyjudge
from polyjudge.report.page.results_folder import Results
from polyjudge.report.page.verdict import (consistency_sentence, judge_ls_verdict,
                                           reversal_sentence)
from page_results import SNAPSHOT, unusable_condition

JUDGE_LS_PANELS = ["llmbar", "judge_ls_synthetic"]


def pct(row, value, low, high) -> str:
    return f"{100 * row[value]:.1f}% [{100 * row[low]:.1f}, {100 * row[high]:.1f}]"


def pooled(folder, name, file) -> pd.DataFrame:
    """A Judge-LS table's rows pooled over subsets (and orders) with a usable judgment."""
    frame = pd.read_csv(folder / name / "judge_ls" / file)
    frame = frame[frame["subset"] == "all"]
    frame = frame[frame["order"] == "all"] if "order" in frame else frame
    count = {"accuracy.csv": "n", "flips.csv": "n_pairs", "position.csv": "n_decisive"}[file]
    return frame[frame[count] > 0]


def bh(p_values: pd.Series) -> int:
    """Discoveries at FDR 0.05 by statsmodels' Benjamini-Hochberg, the peer of the page's count."""
    return int(multipletests(p_values.to_numpy(float), alpha=0.05, method="fdr_bh")[0].sum())


def winners(frame, group, value, best) -> pd.Series:
    """The judge best in each ``group`` value that two or more judges have."""
    shared = frame.groupby(group, sort=False).filter(lambda rows: len(rows) > 1)
    return shared.loc[getattr(shared.groupby(group, sort=False)[value], best)(), "judge"]


@pytest.mark.parametrize("name", JUDGE_LS_PANELS)
def test_the_judge_ls_verdict_says_what_its_files_say(name):
    accuracy, switching, bias = judge_ls_verdict(Results(SNAPSHOT), name)
    acc, flips, position = (pooled(SNAPSHOT, name, f)
                            for f in ("accuracy.csv", "flips.csv", "position.csv"))
    # the most accurate judge in the reference condition, against the next, with intervals
    reference = flips["reference"].iloc[0]
    ranked = acc[acc["condition"] == reference].sort_values("strict_accuracy", ascending=False)
    best, second = ranked.iloc[0], ranked.iloc[1]
    accurate = ("strict_accuracy", "strict_ci_low", "strict_ci_high")
    assert accuracy.startswith(
        f"{best['judge']} is the most accurate judge in the reference condition {reference}: "
        f"{pct(best, *accurate)} against {pct(second, *accurate)} for the next, "
        f"{second['judge']}; the two intervals ")
    tops = winners(acc, "condition", "strict_accuracy", "idxmax")
    assert set(tops) == {best["judge"]} and f"in all {len(tops)} conditions" in accuracy
    # what the switch from the reference flips: lowest and highest rate, who flips least
    low, high = flips.loc[flips["flip_rate"].idxmin()], flips.loc[flips["flip_rate"].idxmax()]
    rate = ("flip_rate", "flip_ci_low", "flip_ci_high")
    assert switching.startswith(
        f"Switching from {reference} to another condition changes between {pct(low, *rate)} "
        f"({low['judge']}, {low['target']}) and {pct(high, *rate)} ({high['judge']}, "
        f"{high['target']}) of verdicts; ")
    least = winners(flips, "target", "flip_rate", "idxmin")
    judge = least.value_counts().index[0]
    wins = f"{least.value_counts().iloc[0]} of the {len(least)}" if least.nunique() > 1 else \
        "both" if len(least) == 2 else f"all {len(least)}"
    assert f"{judge} flips least in {wins} conditions" in switching
    assert (f"McNemar, FDR 0.05 over the pairs) in {bh(flips['mcnemar_p'])} of "
            f"{len(flips)} judge x condition pairs") in switching
    # position bias: the item-clustered test of a first-seat share of 1/2, and the shares
    p = position["first_seat_cluster_p"]
    low = position.loc[position["first_seat_rate"].idxmin()]
    high = position.loc[position["first_seat_rate"].idxmax()]
    seat = ("first_seat_rate", "first_seat_ci_low", "first_seat_ci_high")
    assert bias == (
        "Position bias: the first-seat share differs significantly from 50% (item-clustered "
        f"binomial test, FDR 0.05 over the cells) in {bh(p)} of {len(position)} judge x "
        f"condition cells; shares run from {pct(low, *seat)} ({low['judge']}, "
        f"{low['condition']}) to {pct(high, *seat)} ({high['judge']}, {high['condition']}).")
    # every rate in the verdict is one of the files' values, rounded as shown
    values = {f"{100 * v:.1f}" for frame in (acc, flips, position)
              for v in frame.select_dtypes("number").to_numpy().ravel() if pd.notna(v)}
    shown = re.findall(r"(?<![\d.])\d+\.\d(?!\d)", " ".join([accuracy, switching, bias]))
    assert len(shown) >= 15 and set(shown) <= values


def test_the_judge_ls_verdict_leaves_out_conditions_without_usable_judgments(tmp_path):
    """The local judge example's shape (every zh verdict unparseable): the verdict names the
    empty cells and takes no number from them (their McNemar p = 1 of no pair is no test)."""
    root = unusable_condition(tmp_path)
    *numbers, note = judge_ls_verdict(Results(root), "ls")
    assert note.startswith("No usable judgment for judge_a x zh, judge_b x zh ")
    assert len(numbers) == 3 and not any("zh" in sentence for sentence in numbers)
    flips = pd.read_csv(root / "ls" / "judge_ls" / "flips.csv")
    tested = flips[(flips["subset"] == "all") & (flips["n_pairs"] > 0)]
    assert len(tested) < len(flips[flips["subset"] == "all"])
    assert f"of {len(tested)} judge x condition pairs" in numbers[1]
    # no usable judgment at all: one sentence, no number
    folder = root / "ls" / "judge_ls"
    for file, columns in (("accuracy.csv", ["n", "strict_accuracy"]),
                          ("flips.csv", ["n_pairs", "flip_rate"]),
                          ("position.csv", ["n", "n_decisive", "first_seat_rate"])):
        frame = pd.read_csv(folder / file)
        frame[columns[:-1]], frame[columns[-1]] = 0, np.nan
        frame.to_csv(folder / file, index=False)
    (sentence,) = judge_ls_verdict(Results(root), "ls")
    assert sentence.startswith("No usable judgment in this panel") and not re.search(r"\d",
                                                                                     sentence)


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
    assert raw["mean"] < raw["spread_low"] == raw["spread_high"]  # what a user took for a bug
    text = consistency_sentence(held.tau)
    assert "[" not in text  # no bracket that reads as an interval around the mean
    assert (f"{raw['mean']:.2f} raw, {tau.loc['CBC', 'mean']:.2f} after CBC; the middle 95% "
            f"of replicates runs from {raw['spread_low']:.2f} to {raw['spread_high']:.2f} "
            "raw") in text
    assert "mean over 200 task-bootstrap replicates" in text
    assert "The raw mean lies below that range because tau takes few values here" in text
    draws = held.replicates.loc[held.replicates["method"] == "Raw", "tau"]
    assert 0 < (draws < raw["spread_low"]).mean() <= 0.025  # "a few (at most 2.5%)"
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
