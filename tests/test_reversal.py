"""Rank reversal: hand-computed cases, identities, the published devai table, synthetic panels."""
import json

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from conftest import DATA, DEVAI_BACKBONE_LABELS

from polyjudge.analyses import reversal
from polyjudge.cbc.estimator import double_center
from polyjudge.data.panel import Panel

PUBLISHED = DATA / "cbc_paper_artifacts" / "paper" / "analysis" / "rank_reversal_delta.csv"


def make_panel(values) -> Panel:
    n, k, m = values.shape
    return Panel(np.asarray(values, dtype=float), tuple(f"t{i}" for i in range(n)),
                 tuple(f"L{i}" for i in range(k)), tuple(f"B{i}" for i in range(m)))


def simulate(rng, alpha, interaction_sd=0.0, task_language_sd=5.0, n_tasks=55, n_languages=8,
             noise_sd=10.0):
    """T = task + alpha(b) + gamma(t, l) + beta(l, b) + noise; beta double-centred (or 0)."""
    m = len(alpha)
    beta = double_center(rng.normal(0, interaction_sd, (n_languages, m)))
    values = (rng.normal(0, 10, (n_tasks, 1, 1)) + np.asarray(alpha, dtype=float)
              + rng.normal(0, task_language_sd, (n_tasks, n_languages, 1)) + beta
              + rng.normal(0, noise_sd, (n_tasks, n_languages, m)))
    return make_panel(values)


# --- hand-computed cases ---------------------------------------------------------------------

def test_two_backbones_reverse_with_the_textbook_tests():
    # B0 - B1 per task: L0 (+3, +5, +4, +6), L1 (-1, -3, -2, -2), L2 (+1, +1, +2, +0)
    diffs = np.array([[3, -1, 1], [5, -3, 1], [4, -2, 2], [6, -2, 0]], dtype=float)
    base = np.arange(12, dtype=float).reshape(4, 3)
    panel = make_panel(np.stack([base + diffs, base], axis=-1))
    row = reversal.rank_reversal(panel).iloc[0]
    # d = (4.5, -2, 1): most negative product is L0 x L1 = -9
    assert (row.witness_a, row.witness_b) == ("L0", "L1")
    assert row.d_a == pytest.approx(4.5) and row.d_b == pytest.approx(-2.0)
    assert row.delta == pytest.approx(9.0)
    p_a = scipy.stats.ttest_1samp(diffs[:, 0], 0, alternative="greater").pvalue
    p_b = scipy.stats.ttest_1samp(diffs[:, 1], 0, alternative="less").pvalue
    assert row.p_value == pytest.approx(max(p_a, p_b))
    assert row.q_value == pytest.approx(row.p_value)      # a single pair: BH leaves p alone
    assert row.reversed and row.significant


def test_no_reversal_gives_p_one_and_the_smallest_product_as_witnesses():
    diffs = np.array([[3, 1, 2], [5, 2, 2], [4, 1, 3]], dtype=float)     # d = (4, 4/3, 7/3)
    panel = make_panel(np.stack([diffs, np.zeros_like(diffs)], axis=-1))
    row = reversal.rank_reversal(panel).iloc[0]
    assert (row.witness_a, row.witness_b) == ("L1", "L2")
    assert row.delta == 0 and row.p_value == 1 and row.q_value == 1
    assert not row.reversed and not row.significant


def test_missing_tasks_are_omitted_per_test():
    rng = np.random.default_rng(3)
    values = rng.normal(50, 10, (30, 3, 2))
    values[:, 0, 0] += 15
    values[:, 1, 1] += 15
    values[[2, 7], 0, 1] = np.nan
    values[11, 1, 0] = np.nan
    panel = make_panel(values)
    row = reversal.rank_reversal(panel).iloc[0]
    assert (row.witness_a, row.witness_b) == ("L0", "L1")
    diff_a = values[:, 0, 0] - values[:, 0, 1]
    diff_b = values[:, 1, 0] - values[:, 1, 1]
    p_a = scipy.stats.ttest_1samp(diff_a[np.isfinite(diff_a)], 0, alternative="greater").pvalue
    p_b = scipy.stats.ttest_1samp(diff_b[np.isfinite(diff_b)], 0, alternative="less").pvalue
    assert row.p_value == pytest.approx(max(p_a, p_b), rel=1e-12)
    assert row.d_a == pytest.approx(np.nanmean(values[:, 0, 0]) - np.nanmean(values[:, 0, 1]))


def test_count_reversals_identities():
    means = np.random.default_rng(0).normal(50, 10, (8, 6))
    additive = means - double_center(means)            # CBC: the same order in every language
    assert reversal.count_reversals(additive) == 0
    stack = np.stack([means, additive, means[:, ::-1]])
    counts = reversal.count_reversals(stack)
    assert counts.shape == (3,) and counts[1] == 0 and counts[0] == counts[2]
    gaps = means[:, :, None] - means[:, None, :]          # every ordered pair, twice per pair
    assert counts[0] == ((gaps.max(axis=0) > 0) & (gaps.min(axis=0) < 0)).sum() / 2


def test_additive_fit_leaves_each_tasks_double_centred_slice():
    values = np.random.default_rng(1).normal(size=(4, 5, 3))
    fit, residual = reversal.additive_fit(values)
    np.testing.assert_allclose(residual, np.stack([double_center(v) for v in values]), atol=1e-12)
    np.testing.assert_allclose(fit + residual, values)


def test_count_test_does_not_depend_on_chunking():
    panel = simulate(np.random.default_rng(2), [0, 1, 2, 3])
    small = reversal.reversal_count_test(panel, 50, seed=9, chunk_elements=1)
    large = reversal.reversal_count_test(panel, 50, seed=9)
    np.testing.assert_array_equal(small.null, large.null)
    assert small.p_value == (1 + (small.null >= small.observed).sum()) / 51


def test_bad_inputs_are_refused():
    panel = make_panel(np.zeros((3, 1, 2)))
    with pytest.raises(ValueError, match="languages and backbones"):
        reversal.rank_reversal(panel)
    with pytest.raises(ValueError, match="fdr"):
        reversal.rank_reversal(make_panel(np.zeros((3, 2, 2))), fdr=1.5)
    with pytest.raises(ValueError, match="n_permutations"):
        reversal.reversal_count_test(make_panel(np.zeros((3, 2, 2))), 0)


# --- published devai values -------------------------------------------------------------------

@pytest.fixture(scope="module")
def devai_pairs(devai_panel):
    return reversal.rank_reversal(devai_panel)


def test_devai_matches_the_published_table(devai_panel, devai_pairs):
    published = pd.read_csv(PUBLISHED)
    display = dict(zip(devai_panel.backbones, DEVAI_BACKBONE_LABELS))
    assert devai_pairs["backbone_i"].map(display).tolist() == published["backbone_i"].tolist()
    assert devai_pairs["backbone_j"].map(display).tolist() == published["backbone_j"].tolist()
    assert devai_pairs["witness_a"].tolist() == published["language_a"].tolist()
    assert devai_pairs["witness_b"].tolist() == published["language_b"].tolist()
    np.testing.assert_allclose(devai_pairs["delta"], published["delta"], atol=0.01)
    np.testing.assert_allclose(devai_pairs["d_a"], published["d_a"], atol=1e-9)
    np.testing.assert_allclose(devai_pairs["p_value"], published["p_value_raw"], rtol=1e-6)
    np.testing.assert_allclose(devai_pairs["q_value"], published["p_value_bh"], rtol=1e-6)
    assert devai_pairs["reversed"].sum() == 7 and devai_pairs["significant"].sum() == 7
    assert (devai_pairs["significant"] == published["bh_significant_fdr_005"]).all()
    first = devai_pairs.iloc[0]
    assert (first.witness_a, first.witness_b) == ("English", "Spanish")
    assert first.delta == pytest.approx(400.79, abs=0.01) and first.q_value == pytest.approx(
        9.7e-8, rel=0.01)


def test_devai_top_backbone_alternates_and_global_test(devai_panel, devai_pairs):
    top = reversal.top_backbone_per_language(devai_panel)
    assert top["English"] == "gpt-4o" and top["Arabic"] == "gemini-3-flash-preview"
    test = reversal.reversal_count_test(devai_panel, 999, seed=11)
    assert test.observed == 7 and test.null.max() < 7
    assert test.p_value == pytest.approx(0.001)                          # the published p
    summary = reversal.reversal_summary(devai_pairs, top, test)
    assert json.loads(json.dumps(summary)) == summary
    assert (summary["n_pairs"], summary["n_reversed"], summary["n_significant"]) == (15, 7, 7)
    assert summary["top_alternates"] and summary["n_distinct_top"] == 2
    assert summary["global_test"]["n_permutations"] == 999


def test_incomplete_mrewardbench_panel_runs(mrewardbench_panel):
    assert np.isnan(mrewardbench_panel.values).sum() == 35
    pairs = reversal.rank_reversal(mrewardbench_panel)
    assert len(pairs) == 10 and np.isfinite(
        pairs[["d_a", "d_b", "p_value", "q_value"]]).all().all()


# --- synthetic panels with a known truth ------------------------------------------------------

@pytest.mark.parametrize("alpha", [[0] * 6, [0, 1.5, 3, 4.5, 6, 7.5]], ids=["tied", "close"])
def test_no_interaction_keeps_the_false_positive_rate(alpha):
    # tied backbones are the least favourable point of the null (every gap is 0)
    rng = np.random.default_rng(20)
    any_significant = [reversal.rank_reversal(simulate(rng, alpha))["significant"].any()
                       for _ in range(100)]
    assert np.mean(any_significant) <= 0.05


@pytest.mark.parametrize("task_language_sd", [0.0, 5.0])
def test_no_interaction_gives_a_roughly_uniform_global_p(task_language_sd):
    # close backbones, so that reversals by chance are common and the count varies
    rng = np.random.default_rng(21)
    p = np.array([reversal.reversal_count_test(
        simulate(rng, [0, 1.5, 3, 4.5, 6, 7.5], task_language_sd=task_language_sd), 99,
        seed=rng).p_value for _ in range(100)])
    assert (p <= 0.05).mean() <= 0.08 and (p <= 0.1).mean() <= 0.15
    # slightly conservative (a discrete count, ties count against H0), but not stuck near 1
    assert 0.2 <= (p <= 0.5).mean() <= 0.6 and 0.4 <= p.mean() <= 0.7


def test_planted_interaction_is_detected_by_both_tests():
    rng = np.random.default_rng(22)
    for _ in range(20):
        panel = simulate(rng, [0, 3, 6, 9, 12, 15], interaction_sd=6.0)
        assert reversal.rank_reversal(panel)["significant"].any()
        assert reversal.reversal_count_test(panel, 99, seed=rng).p_value <= 0.05
