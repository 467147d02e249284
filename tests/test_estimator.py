"""CBC estimator: known answers, identities, the published devai values."""
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import DATA, DEVAI_BACKBONE_LABELS

from polyjudge.cbc import estimator
from polyjudge.data.panel import Panel


def test_double_center_hand_computed():
    # M = [[1, 2], [3, 8]]: margins col (2, 5), row (1.5, 5.5), grand 3.5
    beta = estimator.double_center(np.array([[1.0, 2.0], [3.0, 8.0]]))
    np.testing.assert_allclose(beta, [[1.0, -1.0], [-1.0, 1.0]])


def test_beta_rows_and_columns_sum_to_zero_and_calibration_is_additive():
    rng = np.random.default_rng(0)
    means = rng.normal(50, 20, size=(8, 6))
    beta = estimator.double_center(means)
    np.testing.assert_allclose(beta.sum(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(beta.sum(axis=1), 0, atol=1e-12)
    calibrated = means - beta
    # additive: every row is the column means shifted by a constant
    shift = calibrated - means.mean(axis=0)
    np.testing.assert_allclose(shift, shift[:, :1].repeat(6, axis=1), atol=1e-12)
    # CBC never moves a language's mean over backbones
    np.testing.assert_allclose(calibrated.mean(axis=1), means.mean(axis=1))
    ranks = estimator.rank_within_language(calibrated)
    assert (ranks == ranks[0]).all()


def test_double_center_broadcasts_over_replicates():
    stack = np.random.default_rng(1).normal(size=(5, 4, 3))
    np.testing.assert_allclose(estimator.double_center(stack),
                               np.stack([estimator.double_center(m) for m in stack]))


def test_weighted_variant_keeps_cbc_rankings():
    means = np.random.default_rng(2).normal(50, 20, size=(8, 6))
    weights = estimator.cbc_weights(means)
    assert weights.sum() == pytest.approx(1)
    np.testing.assert_allclose(weights, (1 / means.var(axis=0)) / (1 / means.var(axis=0)).sum())
    beta_w = estimator.double_center_weighted(means)
    np.testing.assert_allclose(beta_w.sum(axis=0), 0, atol=1e-9)  # columns still centred
    np.testing.assert_array_equal(
        estimator.rank_within_language(means - beta_w),
        estimator.rank_within_language(means - estimator.double_center(means)))



def test_weights_of_backbones_constant_over_languages_are_the_limit_of_one_over_variance():
    means = np.random.default_rng(4).normal(50, 20, size=(2, 4, 3))
    means[0, :, 1] = 60.0  # replicate 0: backbone 1 is the same in every language
    means[1, :, 0] = means[1, :, 2] = 40.0  # replicate 1: backbones 0 and 2 are
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        weights = estimator.cbc_weights(means)
        beta_w = estimator.double_center_weighted(means)
    np.testing.assert_array_equal(weights, [[0, 1, 0], [0.5, 0, 0.5]])
    near = means.copy()
    near[0, :, 1] += np.array([1, -1, 1, -1]) * 1e-6  # a variance of 1e-12 instead of 0
    np.testing.assert_allclose(estimator.cbc_weights(near)[0], [0, 1, 0], atol=1e-9)
    assert np.isfinite(beta_w).all()
    np.testing.assert_allclose(beta_w.sum(axis=-2), 0, atol=1e-9)

def test_radius_known_answer():
    # sigma 22.2441 at m=6, k=8, n=55, eps=0.05 gives the paper's "about 10" (9.96)
    assert estimator.finite_sample_radius(22.2441, 55, 8, 6, 0.05) == \
        pytest.approx(9.9592, abs=1e-3)
    r = estimator.finite_sample_radius(1.0, 4, 2, 2, 0.1)
    assert r == pytest.approx(np.sqrt(2 * 0.5 * 0.5 * np.log(80) / 4))


def test_ols_r_squared_matches_numpy_lstsq_on_one_hot_design():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"a": rng.integers(0, 4, 200).astype(str),
                          "b": rng.integers(0, 3, 200).astype(str)})
    frame["score"] = rng.normal(size=200) + (frame["a"] == "1") * 2.0
    terms = [("a",), ("b",), ("a", "b")]
    design = np.column_stack(
        [np.ones(200)] + [pd.get_dummies(frame[list(t)].agg("|".join, axis=1)).to_numpy(float)
                          for t in terms])
    fitted = design @ np.linalg.lstsq(design, frame["score"], rcond=None)[0]
    expected = 1 - (((frame["score"] - fitted) ** 2).sum()
                    / ((frame["score"] - frame["score"].mean()) ** 2).sum())
    assert estimator.ols_r_squared(frame, terms) == pytest.approx(expected, abs=1e-10)


def test_devai_beta_equals_published_matrix(devai_panel):
    published = pd.read_csv(DATA / "cbc_paper_artifacts/paper/analysis/beta_hat.csv", index_col=0)
    assert tuple(published.columns) == DEVAI_BACKBONE_LABELS
    assert tuple(published.index) == devai_panel.languages
    result = estimator.fit_cbc(devai_panel)
    np.testing.assert_allclose(result.beta, published.to_numpy(), atol=1e-6)
    assert result.beta[6, 0] == pytest.approx(-20.61, abs=5e-3)  # Spanish, gpt-4o
    assert result.beta[0, 0] == pytest.approx(11.84, abs=5e-3)  # English, gpt-4o
    order = [devai_panel.backbones[i] for i in np.argsort(result.rank_cbc[0])]
    assert order == ["gemini-3-flash-preview", "gpt-4o", "gpt-5.4", "claude-sonnet-4.6",
                     "deepseek-v3.2", "qwen3.5-9b"]
    assert (result.rank_cbc == result.rank_cbc[0]).all()


def test_devai_sigma_radius_and_r_squared(devai_panel, devai_runs):
    sigma = devai_panel.values.std()
    assert sigma == pytest.approx(22.2441, abs=1e-4)
    assert estimator.finite_sample_radius(sigma, 55, 8, 6, 0.05) == pytest.approx(9.96, abs=5e-3)
    # the residual sigma gives "about 5", as docs/methods.md says
    residual = estimator.residual_sd(devai_panel.values)
    assert 4.5 < estimator.finite_sample_radius(residual, 55, 8, 6, 0.05) < 5.5
    assert estimator.ols_r_squared(devai_runs, estimator.TWO_WAY_TERMS) == pytest.approx(
        0.6905, abs=1e-3)
    assert estimator.ols_r_squared(devai_runs, estimator.FULL_TERMS) == pytest.approx(
        0.7053, abs=1e-3)


def test_power_statement_radius_below_half_max_beta_from_n_52(devai_panel):
    max_beta = np.abs(estimator.fit_cbc(devai_panel).beta).max()
    sigma = devai_panel.values.std()
    radius = lambda n: estimator.finite_sample_radius(sigma, n, 8, 6, 0.05)
    assert radius(52) < max_beta / 2 <= radius(51)
    assert estimator.tasks_for_radius(sigma, max_beta / 2, 8, 6, 0.05) == 52
    assert estimator.tasks_for_radius(sigma, 0.0, 8, 6, 0.05) is None  # beta all 0


def test_fit_cbc_omits_missing_tasks_per_cell():
    values = np.arange(24, dtype=float).reshape(2, 3, 4)
    values[0, 1, 2] = np.nan
    panel = Panel(values, ("t1", "t2"), ("a", "b", "c"), ("w", "x", "y", "z"))
    means = panel.cell_means()
    assert means[1, 2] == values[1, 1, 2]
    np.testing.assert_allclose(estimator.fit_cbc(panel).beta, estimator.double_center(means))


def test_rank_by_count_gives_the_ranks_of_rank_within_language_stacked():
    from polyjudge.cbc.estimator import rank_by_count, rank_within_language
    rng = np.random.default_rng(3)
    stacked = rng.integers(0, 4, (5, 6, 7)).astype(float)  # many ties
    expected = np.stack([rank_within_language(matrix) for matrix in stacked])
    assert np.array_equal(rank_by_count(stacked), expected)
