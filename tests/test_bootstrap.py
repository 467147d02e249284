"""Task bootstrap, weighted cell means and the vectorised mean pairwise Kendall tau-b."""
import itertools

import numpy as np
import pytest
import scipy.stats

from polyjudge.cbc.bootstrap import (
    TaskBootstrap,
    mean_pairwise_tau,
    pairwise_tau,
    task_bootstrap,
    weighted_cell_means,
)


def scipy_mean_tau(matrix):
    """Reference: scipy's tau-b for every row pair, NaN pairs skipped."""
    taus = [scipy.stats.kendalltau(matrix[i], matrix[j]).statistic
            for i, j in itertools.combinations(range(len(matrix)), 2)]
    taus = [t for t in taus if np.isfinite(t)]
    return np.mean(taus) if taus else np.nan


def test_tau_known_answers():
    x = np.array([[1.0, 2, 3], [3, 2, 1], [1, 2, 3], [1, 1, 2]])
    tau = pairwise_tau(x)
    assert tau[0, 1] == pytest.approx(-1) and tau[0, 2] == pytest.approx(1)
    # one tie in row 3: (concordant - discordant) / sqrt(untied_0 * untied_3) = 2 / sqrt(3 * 2)
    assert tau[0, 3] == pytest.approx(2 / np.sqrt(6))
    assert mean_pairwise_tau(x[:2]) == pytest.approx(-1)


def test_tau_equals_scipy_with_ties_constant_and_nan_rows():
    rng = np.random.default_rng(0)
    stack = rng.integers(0, 4, size=(60, 7, 5)).astype(float)  # many ties
    stack[::7, 2] = 1.0  # constant rows: undefined pairs
    stack[::5, 4, 1] = np.nan  # NaN rows
    stack[3] = 2.0  # every row constant: no pair defined
    ours = mean_pairwise_tau(stack)
    expected = np.array([scipy_mean_tau(s) for s in stack])
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-12, equal_nan=True)
    assert np.isnan(ours[3]) and np.isfinite(ours).sum() == 59
    for s in stack[:5]:
        for i, j in itertools.combinations(range(7), 2):
            ref = scipy.stats.kendalltau(s[i], s[j]).statistic
            assert pairwise_tau(s)[i, j] == pytest.approx(ref, nan_ok=True, abs=1e-12)


def test_tau_on_continuous_matrices_matches_scipy():
    stack = np.random.default_rng(1).normal(size=(40, 8, 6))
    expected = [scipy_mean_tau(s) for s in stack]
    np.testing.assert_allclose(mean_pairwise_tau(stack), expected, atol=1e-12)


def test_rounding_level_differences_are_ties():
    """Cell means equal in exact arithmetic can differ in the last bits (summation order)."""
    x = np.array([[37.80492899, 11.9, 37.80492899 + 7e-15, 14.4], [1.0, 2.0, 3.0, 4.0]])
    exact = np.array([[37.80492899, 11.9, 37.80492899, 14.4], [1.0, 2.0, 3.0, 4.0]])
    assert mean_pairwise_tau(x) == pytest.approx(scipy_mean_tau(exact))
    assert mean_pairwise_tau(x, tie_rtol=0) == pytest.approx(scipy_mean_tau(x))
    assert mean_pairwise_tau(x) != pytest.approx(mean_pairwise_tau(x, tie_rtol=0))


def test_bootstrap_identities():
    boot = task_bootstrap(30, 200, np.random.default_rng(3), row_permutations=(4, 5))
    assert boot.counts.shape == (200, 30) and boot.n_replicates == 200 and boot.n_tasks == 30
    assert (boot.counts.sum(axis=1) == 30).all()
    assert np.array_equal(boot.oob, boot.counts == 0)
    assert (np.sort(boot.row_permutations, axis=-1) == np.arange(5)).all()
    # about (1 - 1/n)^n of the tasks are out of bag
    assert boot.oob.mean() == pytest.approx((1 - 1 / 30) ** 30, abs=0.02)


def test_bootstrap_stream_is_the_protocol_stream():
    """Plain: per-replicate ``choice``; with permutations: choice then k row permutations."""
    plain = task_bootstrap(12, 5, 7)
    rng = np.random.default_rng(7)
    draws = [rng.choice(12, 12, replace=True) for _ in range(5)]
    assert np.array_equal(plain.counts, [np.bincount(d, minlength=12) for d in draws])
    assert plain.row_permutations is None

    mixed = task_bootstrap(12, 5, 7, row_permutations=(3, 4))
    rng = np.random.default_rng(7)
    for r in range(5):
        assert np.array_equal(mixed.counts[r], np.bincount(rng.choice(12, 12, replace=True),
                                                           minlength=12))
        assert np.array_equal(mixed.row_permutations[r], [rng.permutation(4) for _ in range(3)])


def test_bootstrap_rejects_bad_sizes():
    with pytest.raises(ValueError, match="at least 2 tasks"):
        task_bootstrap(1, 10, 0)


def test_weighted_cell_means_nan_aware():
    values = np.array([[[1.0, np.nan]], [[3.0, 4.0]], [[np.nan, 8.0]]])  # (3 tasks, 1, 2)
    weights = np.array([[2, 1, 0], [0, 0, 1], [1, 1, 1]])
    means = weighted_cell_means(values, weights)
    expected = [[[(2 * 1 + 3) / 3, 4.0]], [[np.nan, 8.0]], [[2.0, 6.0]]]
    np.testing.assert_allclose(means, expected, equal_nan=True)
    oob = weighted_cell_means(values, np.array([[True, False, True]]))
    np.testing.assert_allclose(oob, [[[1.0, 8.0]]])


def test_weighted_cell_means_equal_explicit_resampling():
    values = np.random.default_rng(2).normal(size=(20, 3, 4))
    boot = task_bootstrap(20, 6, 5)
    means = weighted_cell_means(values, boot.counts)
    for r in range(6):
        np.testing.assert_allclose(means[r], np.repeat(values, boot.counts[r], axis=0).mean(0))


def test_full_fit_bootstrap():
    full = TaskBootstrap.full_fit(4)
    assert full.counts.tolist() == [[1, 1, 1, 1]] and full.oob.all()


# --- chunked replicates: bounded memory, the same result as one chunk -------------------------
from polyjudge.cbc.bootstrap import replicate_chunk, task_bootstrap_chunks  # noqa: E402


@pytest.mark.parametrize("permutations", [None, (4, 3)])
def test_chunks_are_the_one_call_stream(permutations):
    whole = task_bootstrap(11, 50, np.random.default_rng(3), row_permutations=permutations)
    chunks = list(task_bootstrap_chunks(11, 50, np.random.default_rng(3), 7, permutations))
    assert [len(c.counts) for c in chunks] == [7] * 7 + [1]
    np.testing.assert_array_equal(np.concatenate([c.counts for c in chunks]), whole.counts)
    if permutations:
        np.testing.assert_array_equal(np.concatenate([c.row_permutations for c in chunks]),
                                      whole.row_permutations)


def test_replicate_chunk_respects_the_budget():
    assert replicate_chunk(1000, 10, budget=8 * 10 * 200) == 192   # whole row blocks
    assert replicate_chunk(1000, 10 ** 9, budget=1) == 64          # at least one block
    assert replicate_chunk(30, 1) == 30                            # all, if they fit


def _synthetic_with_runs():
    from polyjudge.analyses.synthetic import simulate_panel
    from polyjudge.data.io import build_panel
    draw = simulate_panel(5, n_tasks=20, n_languages=4, n_backbones=3, n_frameworks=2,
                          requirements_per_task=3)
    return build_panel(draw.runs, "s"), draw.runs, draw.requirements


def test_cell_means_are_bit_identical_in_chunks_of_row_blocks():
    values = np.round(np.random.default_rng(1).random((40, 6, 5)) * 30) / 3  # tie-prone
    counts = task_bootstrap(40, 500, 2).counts
    whole = weighted_cell_means(values, counts)
    parts = [weighted_cell_means(values, counts[i:i + 128]) for i in range(0, 500, 128)]
    np.testing.assert_array_equal(np.concatenate(parts), whole)


def test_heldout_and_decisions_do_not_depend_on_the_chunk_size():
    from polyjudge.analyses.heldout import decision_agreement, heldout_replicates
    panel, runs, requirements = _synthetic_with_runs()
    whole = heldout_replicates(panel, None, 200, 7, runs=runs, requirements=requirements)
    assert whole["method"].nunique() == 14 and replicate_chunk(200, 10_000) == 200
    chunked = heldout_replicates(panel, None, 200, 7, runs=runs, requirements=requirements,
                                 chunk_size=64)
    np.testing.assert_array_equal(chunked["tau"], whole["tau"])
    assert chunked.drop(columns="tau").equals(whole.drop(columns="tau"))
    assert decision_agreement(panel, 200, 307, chunk_size=64) == \
        decision_agreement(panel, 200, 307)


def test_band_does_not_depend_on_the_chunk_size():
    from polyjudge.cbc.band import bootstrap_band
    panel = _synthetic_with_runs()[0]
    whole, chunked = bootstrap_band(panel, 300, 4), bootstrap_band(panel, 300, 4, chunk_size=128)
    assert chunked.critical_value == whole.critical_value
    assert chunked.max_dev_radius == whole.max_dev_radius
    assert chunked.frame.equals(whole.frame)
