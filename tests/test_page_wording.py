"""What the page's words claim, against the files and against identities of the method: what a
panel ranks (leniency without a reference, accuracy with one), CBC's common order (true by
construction), how double-centring spreads one cell, the largest cell named, a tie said as a
tie, no range from a cell to itself, no empty chart, the calls' own outcome (no_input is not
"unparseable") and calibrated scores outside the score range counted. The shapes are the ones
users met: DevAI's pass rates and the local judge example (two judges that agree, conditions
whose translations failed)."""
from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pandas as pd
import pytest

from polyjudge.analyses import judge_ls as jl
from polyjudge.cbc.estimator import double_center
from polyjudge.cbc.summary import outside_score_range
from polyjudge.report.page.meaning import spread_sentence
from polyjudge.report.page.results_folder import Results
from polyjudge.report.page.sections import panel_data
from polyjudge.report.page.verdict import interaction_sentence, judge_ls_verdict, verdict
from page_results import SNAPSHOT


def score_panel(root, kind, files=("runs", "requirements")):
    """The snapshot's devai panel under ``root``/p with an inputs.json of panel ``kind``."""
    folder = root / "p"
    shutil.copytree(SNAPSHOT / "devai" / "cbc", folder / "cbc")
    shutil.copytree(SNAPSHOT / "devai" / "reversal", folder / "reversal")
    (folder / "inputs.json").write_text(json.dumps(
        {"kind": kind, "files": {f: {"path": f"{f}.csv", "sha256": "0" * 64} for f in files}}))
    return Results(root)


@pytest.mark.parametrize("kind, files, words, first", [
    ("judge_runs", ("runs", "requirements"), "a more lenient judge", "the most lenient judge"),
    ("judgment_tree", ("judgments",), "a more lenient judge", "the most lenient judge"),
    ("preference_margins", ("a", "b"), "more agreement with them, and also a wider use",
     "the strongest preference for the labelled responses"),
    ("synthetic", (), "no judge is rated", "the largest planted effect")])
def test_each_panel_says_what_its_ranking_ranks(tmp_path, kind, files, words, first):
    """DevAI's first backbone is the one that judges the most requirements satisfied: with no
    reference, the most lenient, and the page says so before any ranking."""
    res = score_panel(tmp_path, kind, files)
    page = panel_data(res, "p")
    assert page["ranked"].startswith("Ranked: each backbone's mean") and words in page["ranked"]
    assert page["verdict"][0].startswith("After CBC, ") and page["verdict"][0].endswith(
        f": {first}.")
    assert " is first " not in " ".join(page["verdict"])


def test_a_judge_ls_panel_ranks_accuracy_against_its_gold(tmp_path):
    shutil.copytree(SNAPSHOT / "llmbar", tmp_path / "llmbar")
    (tmp_path / "llmbar/judge_ls/inputs.json").write_text(json.dumps(
        {"kind": "pairwise_verdicts", "source": "llmbar", "files": {}}))
    page = panel_data(Results(tmp_path), "llmbar")
    assert "accuracy against LLMBar's gold preferences" in page["ranked"]
    assert "more accurate judge" in page["ranked"] and "lenient" not in page["ranked"]
    assert "the items' gold answers" in panel_data(Results(SNAPSHOT), "llmbar")["ranked"]


def test_the_common_order_after_cbc_is_said_to_hold_by_construction(tmp_path):
    """The identity behind the words: M - DC(M) is additive, so every language orders the
    backbones by their column means, whatever M is."""
    rng = np.random.default_rng(0)
    for _ in range(20):
        means = rng.normal(50, 15, (rng.integers(2, 9), rng.integers(2, 7)))
        calibrated = means - double_center(means)
        order = np.argsort(-means.mean(axis=0), kind="stable")
        assert all((np.argsort(-row, kind="stable") == order).all() for row in calibrated)
    page = panel_data(score_panel(tmp_path, "judge_runs"), "p")
    sections = {s["id"]: s for s in page["sections"]}
    assert "holds by construction and is not a finding" in sections["leaderboard"]["note"]
    labels = dict(sections["beta"]["facts"]["items"])
    assert labels["same order in every language after CBC (by construction)"] is True


@pytest.mark.parametrize("k, m", [(8, 6), (7, 5), (3, 4)])
def test_the_spread_sentence_gives_what_double_centring_does_to_one_cell(k, m):
    """One cell off by d = 1 in an additive table: the sentence's four shares are those of
    double_center (rounded as written)."""
    d = np.zeros((k, m))
    d[1, 2] = 1.0
    beta = double_center(d)
    text = spread_sentence(k, m, "plain")
    shares = [float(x) for x in re.findall(r"(-?\d\.\d\d) d", text)]
    assert shares == pytest.approx([beta[1, 2], beta[1, 0], beta[0, 2], beta[0, 0]], abs=0.005)
    assert f"({k} languages x {m} backbones)" in text
    assert re.search(r"\d d", spread_sentence(k, m, "least_squares")) is None


def test_the_verdict_names_the_largest_cell_and_every_tied_one():
    beta = pd.read_csv(SNAPSHOT / "devai" / "cbc" / "beta.csv")
    summary = json.loads((SNAPSHOT / "devai" / "cbc" / "summary.json").read_text())
    row = beta.loc[beta["beta"].abs().idxmax()]
    text = interaction_sentence(summary, beta)
    assert text.startswith(f"The largest language x backbone interaction is {row['backbone']} "
                           f"in {row['language']}: beta = {row['beta']:+.3g} score units, "
                           f"{'above' if row['beta'] > 0 else 'below'} what")
    assert text in verdict(Results(SNAPSHOT), "devai")
    # two languages: every |beta| appears twice (rows sum to 0), so no one cell is the largest
    two = pd.DataFrame({"language": ["en", "en", "zh", "zh"], "backbone": ["a", "b"] * 2,
                        "beta": [0.125, -0.125, -0.125, 0.125]})
    text = interaction_sentence({"max_abs_beta": 0.125, "radius_total": 1.4}, two)
    assert text.startswith("The largest language x backbone interactions, tied at |beta| = "
                           "0.125 score units, are a in en (+0.125), b in en (-0.125), a in zh "
                           "(-0.125) and b in zh (+0.125)")


def local_judge_folder(root):
    """The local judge example's shape: two judges giving the same verdicts in the reference
    condition (a tie in every rate), every verdict of the other conditions empty because their
    translations failed (status no_input in collect/status.csv)."""
    verdicts, _ = jl.simulate_judge_ls(seed=1, n_items=30)
    en = verdicts["condition"] == "en"
    same = verdicts.loc[en & (verdicts["judge"] == "judge_a"), "verdict"].to_numpy()
    verdicts.loc[en & (verdicts["judge"] == "judge_b"), "verdict"] = same
    verdicts.loc[verdicts["condition"].isin(["zh", "cs"]), "verdict"] = ""
    folder = root / "ls"
    (folder / "judge_ls").mkdir(parents=True)
    (folder / "collect").mkdir()
    choices = jl.normalise_choices(verdicts)
    jl.accuracy_table(choices).to_csv(folder / "judge_ls/accuracy.csv", index=False)
    jl.flip_table(choices, "en").to_csv(folder / "judge_ls/flips.csv", index=False)
    jl.position_table(choices).to_csv(folder / "judge_ls/position.csv", index=False)
    pd.DataFrame([{"stage": "judge_pairwise", "endpoint": j, "condition": c, "n_calls": 60,
                   "n_ok": 60 * (c == "en"), "n_parse_failure": 0, "n_failed": 0,
                   "n_no_input": 60 * (c != "en"), "n_truncated": 0}
                  for j in ("judge_a", "judge_b") for c in ("en", "zh", "cs")]).to_csv(
        folder / "collect/status.csv", index=False)
    return Results(root)


def test_the_local_judge_page_says_tie_names_no_cell_twice_and_names_the_outcome(tmp_path):
    res = local_judge_folder(tmp_path)
    accuracy, position, empty = judge_ls_verdict(res, "ls")
    acc = pd.read_csv(tmp_path / "ls/judge_ls/accuracy.csv")
    en = acc[(acc["condition"] == "en") & (acc["subset"] == "all") & (acc["order"] == "all")]
    assert en["strict_accuracy"].nunique() == 1  # the tie users saw declared a winner
    assert accuracy.startswith("In the reference condition en, judge_a and judge_b are tied "
                               "for the highest accuracy: ")
    assert "most accurate judge in" not in accuracy
    # the range of shares named one cell twice ("from x (judge_a, en) to x (judge_a, en)")
    assert position.endswith("in each of the 2 judge x condition cells.")
    assert "shares run from" not in position
    # the calls say no_input (their translations failed), not "unparseable"
    assert "collect/status.csv: 240 no_input" in empty and "unparseable" not in empty
    page = panel_data(res, "ls")
    (section,) = [s for s in page["sections"] if s["id"] == "judge_ls"]
    assert "240 no_input" in section["warning"] and "unparseable" not in section["warning"]


def test_a_chart_with_no_data_is_not_drawn(tmp_path):
    """Every flip needs a usable verdict in a target condition; there is none, so the flips
    table stays (its rows say n_pairs 0) and its chart, which would be empty axes, goes."""
    page = panel_data(local_judge_folder(tmp_path), "ls")
    (section,) = [s for s in page["sections"] if s["id"] == "judge_ls"]
    assert [t["id"] for t in section["tables"]] == ["ls.accuracy", "ls.flips", "ls.position"]
    assert [c["id"] for c in section["charts"]] == ["ls.accuracy_chart", "ls.position_chart"]
    for name in ("devai", "llmbar", "judge_ls_synthetic"):
        for s in panel_data(Results(SNAPSHOT), name)["sections"]:
            assert all(c["spec"]["data"]["values"] for c in s["charts"]), (name, s["id"])


def test_calibrated_scores_outside_the_score_range_are_counted_and_flagged(tmp_path):
    values = np.array([[-3.0, 0.0, 50.0], [100.0, 101.5, np.nan]])
    assert outside_score_range(values, [0, 100]) == {
        "score_range": [0.0, 100.0], "n_scores": 5, "n_outside": 2, "n_below": 1,
        "n_above": 1}
    assert outside_score_range(values, None) is None
    res = score_panel(tmp_path, "judge_runs")
    summary_path = tmp_path / "p/cbc/summary.json"
    summary = json.loads(summary_path.read_text())
    summary["calibrated_outside_range"] = {"score_range": [0.0, 100.0], "n_scores": 2640,
                                           "n_outside": 300, "n_below": 292, "n_above": 8}
    summary_path.write_text(json.dumps(summary))
    (beta,) = [s for s in panel_data(res, "p")["sections"] if s["id"] == "beta"]
    assert beta["warning"].startswith("300 of the 2,640 calibrated task-level scores lie "
                                      "outside the score range [0, 100] (292 below 0, 8 above "
                                      "100)")
    assert dict(beta["facts"]["items"])["calibrated scores outside the score range"] == \
        "300 of 2,640"


def test_a_panel_without_the_reversal_test_still_says_who_leads_raw(tmp_path):
    """devai_raw computes rankings but not the reversal test: its first screen says where the
    raw leader differs and that it is not tested, from the leaderboard's raw ranks."""
    res = score_panel(tmp_path, "judgment_tree", ("judgments",))
    shutil.rmtree(tmp_path / "p/reversal")
    board = pd.read_csv(tmp_path / "p/cbc/leaderboard.csv")
    leaders = board[board["rank_raw"] == 1].groupby("backbone")["language"].apply(list)
    (sentence,) = [s for s in verdict(res, "p") if s.startswith("In the raw scores")]
    assert "differs between languages" in sentence and "is not tested here" in sentence
    for backbone, languages in leaders.items():
        assert backbone in sentence and (f"{len(languages)} languages" in sentence
                                         or all(lang in sentence for lang in languages))
