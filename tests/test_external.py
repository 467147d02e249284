"""External panel (M-RewardBench): published matrices, judge-aware BTL, human-anchor agreement."""
from __future__ import annotations

import json

import choix
import numpy as np
import pandas as pd
import pytest
import scipy.optimize
import scipy.special
from conftest import MREWARDBENCH_ARTIFACTS, MREWARDBENCH_DIR, MREWARDBENCH_EVALUATORS

from polyjudge.analyses import baselines, external, heldout
from polyjudge.cbc.bootstrap import mean_pairwise_tau
from polyjudge.cbc.estimator import fit_cbc
from polyjudge.data.panel import Panel


def published_matrix(name: str, panel: Panel) -> np.ndarray:
    """A published language x evaluator CSV (full evaluator names) in the panel's order."""
    frame = pd.read_csv(MREWARDBENCH_ARTIFACTS / name, index_col=0)
    columns = [MREWARDBENCH_EVALUATORS[b] for b in panel.backbones]
    return frame.loc[list(panel.languages), columns].to_numpy(float)


@pytest.fixture(scope="module")
def beta(mrewardbench_panel):
    return fit_cbc(mrewardbench_panel).beta


@pytest.fixture(scope="module")
def published_sample():
    return external.load_anchor_sample(MREWARDBENCH_DIR / "human_anchor_sample.csv")


@pytest.fixture(scope="module")
def anchor(mrewardbench_panel, beta, published_sample):
    return external.human_anchor_agreement(mrewardbench_panel, beta, published_sample)


# --- the panel and CBC matrices ----------------------------------------------------------------

def test_panel_shape_and_missing(mrewardbench_panel):
    assert mrewardbench_panel.shape == (1500, 7, 5)
    assert np.isnan(mrewardbench_panel.values).sum() == 35
    assert mrewardbench_panel.strata.count("alpacaeval-easy") == 805


@pytest.mark.parametrize("name, field", [("raw_mean_matrix.csv", "cell_means"),
                                         ("beta_hat.csv", "beta"),
                                         ("cbc_mean_matrix.csv", "calibrated")])
def test_cbc_matrices_equal_published(mrewardbench_panel, name, field):
    fit = fit_cbc(mrewardbench_panel)
    np.testing.assert_allclose(getattr(fit, field), published_matrix(name, mrewardbench_panel),
                               rtol=0, atol=1e-9)


# --- judge-aware BTL: known answers ------------------------------------------------------------

def test_pairwise_outcomes_hand_case():
    wins, valid = external.pairwise_outcomes(np.array([[2.0, 1.0, 2.0], [0.0, np.nan, 1.0]]))
    # pairs (0,1), (0,2), (1,2)
    np.testing.assert_array_equal(wins, [[1.0, 0.5, 0.0], [0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(valid, [[1, 1, 1], [0, 1, 0]])


def test_two_evaluators_one_stratum_is_the_logit_of_the_win_share():
    # 2 wins, 1 loss and 1 tie for evaluator 0: p = 2.5 / 4; the missing row is not a tie
    margins = np.array([[2, 1], [2, 1], [1, 2], [3, 3], [np.nan, 1]], dtype=float)
    fit = external.fit_judge_aware_btl(margins)
    assert fit.strengths[0] - fit.strengths[1] == pytest.approx(np.log(5 / 3), abs=1e-9)
    assert fit.strengths.sum() == pytest.approx(0, abs=1e-12)
    np.testing.assert_array_equal(fit.log_gamma, [0.0])


def test_two_strata_known_answer():
    # stratum A: 4 of 5 wins (logit ln 4), B: 2 of 3 (logit ln 2); the model fits both exactly:
    # gamma_A d = ln 4, gamma_B d = ln 2, gamma_A gamma_B = 1 -> d = sqrt(2) ln 2, gamma_A = sqrt 2
    margins = np.array([[1, 0]] * 4 + [[0, 1]] + [[1, 0]] * 2 + [[0, 1]], dtype=float)
    strata = ["A"] * 5 + ["B"] * 3
    fit = external.fit_judge_aware_btl(margins, strata)
    assert fit.strata == ("A", "B")
    assert fit.strengths[0] - fit.strengths[1] == pytest.approx(np.sqrt(2) * np.log(2), abs=1e-7)
    np.testing.assert_allclose(fit.gamma, [np.sqrt(2), 1 / np.sqrt(2)], atol=1e-7)


def test_item_weights_are_multiplicities():
    rng = np.random.default_rng(0)
    margins = rng.integers(-2, 3, size=(40, 4)).astype(float)
    strata = np.repeat(["e", "h"], 20)
    weights = rng.integers(0, 3, size=40)
    weighted = external.fit_judge_aware_btl(margins, strata, weights)
    repeated = external.fit_judge_aware_btl(np.repeat(margins, weights, axis=0),
                                            np.repeat(strata, weights))
    np.testing.assert_allclose(weighted.strengths, repeated.strengths, atol=1e-8)
    np.testing.assert_allclose(weighted.log_gamma, repeated.log_gamma, atol=1e-8)


def test_input_validation():
    with pytest.raises(ValueError, match="evaluators"):
        external.fit_judge_aware_btl(np.zeros((5, 1)))
    with pytest.raises(ValueError, match="strata"):
        external.fit_judge_aware_btl(np.zeros((5, 3)), strata=["a"] * 4)
    with pytest.raises(ValueError, match="item_weights"):
        external.fit_judge_aware_btl(np.zeros((5, 3)), item_weights=-np.ones(5))
    with pytest.raises(ValueError, match="no comparisons"):
        external.fit_judge_aware_btl(np.full((5, 3), np.nan))


# --- judge-aware BTL: planted truth and peers ---------------------------------------------------

def test_planted_truth_recovered():
    """Margins ``gamma_g s + Gumbel noise`` give exactly BTL pairwise marginals.

    The difference of two independent standard Gumbel variables is standard logistic, so
    ``P(margin_i > margin_j | g) = sigmoid(gamma_g (s_i - s_j))``.
    """
    rng = np.random.default_rng(3)
    s_true = np.array([0.6, 0.2, 0.0, -0.3, -0.5])
    a_true = np.log([1.5, 1 / 1.5])
    codes = rng.integers(0, 2, size=30_000)
    margins = np.exp(a_true)[codes, None] * s_true + rng.gumbel(size=(len(codes), 5))
    fit = external.fit_judge_aware_btl(margins, np.array(["easy", "hard"])[codes])
    np.testing.assert_allclose(fit.strengths, s_true, atol=0.03)
    np.testing.assert_allclose(fit.log_gamma, a_true, atol=0.04)


def test_plain_bt_matches_choix(mrewardbench_panel):
    """One stratum (gamma = 1) is plain Bradley-Terry; choix fits the same comparisons.

    choix takes unweighted (winner, loser) tuples, so every decisive comparison is fed twice
    and every tie once in each direction: the log-likelihood is then exactly twice ours
    (a tie is half a win each way), with the same maximiser.
    """
    margins = mrewardbench_panel.values[:300, 0, :]  # English, first 300 items (choix is slow)
    ours = external.fit_judge_aware_btl(margins).strengths
    i, j = np.triu_indices(5, 1)
    diff = margins[:, i] - margins[:, j]
    data = []
    for col in range(len(i)):
        d = diff[:, col]
        data += [(i[col], j[col])] * (2 * int((d > 0).sum()) + int((d == 0).sum()))
        data += [(j[col], i[col])] * (2 * int((d < 0).sum()) + int((d == 0).sum()))
    theirs = choix.opt_pairwise(5, data, alpha=1e-9, method="BFGS", tol=1e-12)
    np.testing.assert_allclose(ours, theirs - theirs.mean(), atol=1e-5)


def test_matches_scipy_lbfgs_on_an_independent_likelihood(mrewardbench_panel):
    """The vectorised Newton fit finds the optimum of a separately written likelihood."""
    panel = mrewardbench_panel
    margins, strata = panel.values[:, 3, :], np.asarray(panel.strata)
    weights = np.random.default_rng(1).integers(0, 2, size=panel.shape[0])
    fit = external.fit_judge_aware_btl(margins, strata, weights)
    easy = strata == "alpacaeval-easy"

    def nll(x):
        s, a = x[:5], x[5]
        total = 0.0
        for p, q in zip(*np.triu_indices(5, 1)):
            d = margins[:, p] - margins[:, q]
            y = np.where(d > 0, 1.0, np.where(d < 0, 0.0, 0.5))
            z = np.where(easy, np.exp(a), np.exp(-a)) * (s[p] - s[q])
            ok = np.isfinite(d) & (weights > 0)
            total -= (weights * (y * scipy.special.log_expit(z)
                                 + (1 - y) * scipy.special.log_expit(-z)))[ok].sum()
        return total

    best = scipy.optimize.minimize(nll, np.zeros(6), method="L-BFGS-B",
                                   options={"ftol": 1e-15, "gtol": 1e-9})
    np.testing.assert_allclose(fit.strengths, best.x[:5] - best.x[:5].mean(), atol=1e-4)
    assert fit.log_gamma[0] == pytest.approx(best.x[5], abs=1e-4)
    assert nll(np.r_[fit.strengths, fit.log_gamma[0]]) <= best.fun + 1e-9


# --- judge-aware BTL on the published panel -----------------------------------------------------

def test_full_fit_btl_close_to_published(mrewardbench_panel):
    """Published full-fit BTL matrix: max |difference| 1.3e-3 and identical rankings.

    The residual difference (largest in English and Arabic) is not explained by ties, missing
    margins, stratum weighting or a ridge; it is below anything that changes an ordering.
    """
    fit = external.judge_aware_btl(mrewardbench_panel)
    published = published_matrix("xu_judge_aware_btl_matrix.csv", mrewardbench_panel)
    assert np.abs(fit.strengths - published).max() < 2e-3
    np.testing.assert_array_equal(np.argsort(-fit.strengths, axis=1),
                                  np.argsort(-published, axis=1))
    summary = json.loads((MREWARDBENCH_ARTIFACTS / "raw_vs_cbc_summary.json").read_text())
    weights = summary["full_panel"]["xu_judge_weights"]
    gamma = [[weights[l][g] for g in fit.strata] for l in mrewardbench_panel.languages]
    np.testing.assert_allclose(fit.gamma, gamma, atol=5e-3)
    assert mean_pairwise_tau(fit.strengths) == pytest.approx(
        summary["full_panel"]["xu_tau_full_panel"], abs=1e-12)


def test_heldout_tau_reproduces_published(mrewardbench_panel):
    """Raw 0.430 [0.371, 0.486], CBC 0.900 [0.790, 1.000], BTL 0.405 [0.352, 0.467]."""
    methods = {"Raw": baselines.raw, "CBC": baselines.cbc,
               "JudgeAwareBTL": external.btl_heldout_matrix}
    replicates = heldout.heldout_replicates(mrewardbench_panel, methods=methods,
                                            n_replicates=1000, seed=7)
    tau = {name: group["tau"].to_numpy() for name, group in replicates.groupby("method")}
    for name, mean, low, high, tol in [("Raw", 0.430, 0.371, 0.486, 0.01),
                                       ("CBC", 0.900, 0.790, 1.000, 0.01),
                                       ("JudgeAwareBTL", 0.405, 0.352, 0.467, 0.02)]:
        assert tau[name].mean() == pytest.approx(mean, abs=tol), name
        assert np.percentile(tau[name], 2.5) == pytest.approx(low, abs=0.02), name
        assert np.percentile(tau[name], 97.5) == pytest.approx(high, abs=0.02), name
    np.testing.assert_allclose(external.btl_heldout_tau(mrewardbench_panel, 1000, 7),
                               tau["JudgeAwareBTL"], atol=1e-12)


# --- human anchor --------------------------------------------------------------------------------

def test_raw_means_equal_the_published_sample(mrewardbench_panel, beta, published_sample):
    frame = pd.read_csv(MREWARDBENCH_DIR / "human_anchor_sample.csv")
    raw, _, _, _ = external.anchor_panel_means(mrewardbench_panel, beta, published_sample)
    np.testing.assert_allclose(raw, frame["raw_margin"], atol=1e-12)
    np.testing.assert_array_equal(raw > 0, frame["raw_correct"] == 1)


def test_anchor_with_tolerance_raw_equals_cbc(anchor):
    assert anchor["n_items"] == 700
    assert anchor["n_correct_raw"] == anchor["n_correct_cbc"] == 481
    assert anchor["agreement_raw"] == anchor["agreement_cbc"] == pytest.approx(481 / 700)
    assert anchor["difference"] == 0.0
    assert anchor["difference_ci"] == [0.0, 0.0]


def test_anchor_without_tolerance_shows_the_published_artefact(anchor):
    published = json.loads((MREWARDBENCH_ARTIFACTS / "human_anchor_validation.json").read_text())
    assert anchor["agreement_raw_no_tolerance"] == pytest.approx(
        published["overall"]["raw_agreement"], abs=1e-12)
    assert anchor["agreement_cbc_no_tolerance"] == pytest.approx(
        published["overall"]["cbc_agreement"], abs=1e-12)  # 536 / 700
    ours = {row["language"]: row for row in anchor["by_language"]}
    for row in published["by_language"]:
        assert ours[row["language"]]["agreement_cbc_no_tolerance"] == pytest.approx(
            row["cbc_agreement"], abs=1e-12)
    low, high = anchor["difference_ci_no_tolerance"]
    assert low > 0.04 and high < 0.12  # published gain CI [0.060, 0.099]
    assert "cannot change" in anchor["explanation"]


def test_every_flipped_decision_had_an_exact_zero_raw_mean(mrewardbench_panel, beta,
                                                           published_sample, anchor):
    raw, cbc, available, _ = external.anchor_panel_means(mrewardbench_panel, beta,
                                                         published_sample)
    flipped = (raw > 0) != (cbc > 0)
    assert flipped.sum() == anchor["n_flipped_no_tolerance"] == 55
    assert (raw[flipped] == 0).all()
    assert np.abs(cbc[flipped]).max() < 1e-15
    complete = available == 5
    assert np.abs(cbc - raw)[complete].max() < 1e-15  # rows of beta sum to 0
    assert anchor["n_items_missing_margin"] == 3 and anchor["n_missing_decision_changed"] == 0


def test_whole_panel_anchor(mrewardbench_panel, beta):
    whole = external.whole_panel_anchor(mrewardbench_panel, beta, n_boot=200)
    assert whole["n_items"] == 10_500
    assert whole["n_items_missing_margin"] == 35
    # with the tolerance, only items with a missing margin can move (the beta row over the
    # evaluators present does not sum to 0)
    changed = whole["n_correct_cbc"] - whole["n_correct_raw"]
    assert abs(changed) <= whole["n_missing_decision_changed"]
    assert whole["n_flipped_exact_zero_raw"] == whole["n_flipped_no_tolerance"] > 0
    assert whole["agreement_cbc_no_tolerance"] > whole["agreement_raw_no_tolerance"]


def test_tolerance_on_a_hand_case():
    # one language, two evaluators; beta = +-0.1 (a row summing to 0)
    values = np.array([[[1.0, -1.0]], [[2.0, 1.0]], [[-1.0, -2.0]]])
    panel = Panel(values, ("0", "1", "2"), ("x",), ("a", "b"), strata=("e", "e", "h"))
    sample = pd.DataFrame({"language": ["x"] * 3, "subset": ["e", "e", "h"],
                           "item": ["0", "1", "2"]})
    out = external.human_anchor_agreement(panel, np.array([[0.1, -0.1]]), sample,
                                          tolerance=1e-9, n_boot=50, seed=0)
    assert out["n_exact_zero_raw"] == 1
    assert out["n_correct_raw"] == out["n_correct_cbc"] == 1
    with pytest.raises(ValueError, match="beta"):
        external.human_anchor_agreement(panel, np.zeros((2, 2)), sample)


def test_stratified_anchor_sample(mrewardbench_panel):
    sample = external.stratified_anchor_sample(mrewardbench_panel, per_language=100, seed=107)
    counts = sample.groupby(["language", "subset"]).size()
    assert set(counts.xs("alpacaeval-easy", level="subset")) == {54}  # proportional 805 / 695
    assert set(counts.xs("alpacaeval-hard", level="subset")) == {46}
    assert not sample.duplicated(["language", "item"]).any()
    strata = dict(zip(mrewardbench_panel.tasks, mrewardbench_panel.strata))
    assert (sample["item"].map(strata) == sample["subset"]).all()
    again = external.stratified_anchor_sample(
        mrewardbench_panel, 100, {"alpacaeval-easy": 54, "alpacaeval-hard": 46}, seed=107)
    pd.testing.assert_frame_equal(sample, again)
    with pytest.raises(ValueError, match="sums to"):
        external.stratified_anchor_sample(mrewardbench_panel, 100, {"alpacaeval-easy": 50,
                                                                    "alpacaeval-hard": 40})


def test_separated_comparisons_have_no_finite_fit_and_give_nan_with_a_warning():
    from polyjudge.analyses.external import fit_judge_aware_btl
    margins = np.array([[3, 1, 0], [2, 1, -1], [4, 0, 1], [1, 0, -2]], float)  # 0 always wins
    with pytest.warns(RuntimeWarning, match="no finite maximum"):
        fit = fit_judge_aware_btl(margins, np.array(["a", "b", "a", "b"]))
    assert np.isnan(fit.strengths).all()
