"""Active labelling and the anytime-valid prediction-powered mean (polyjudge.analyses.labels):
known answers, identities and planted truth, on small synthetic inputs."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ndtri

from polyjudge.analyses.labels import active, anytime
from polyjudge.analyses.labels.synthetic import planted_items, simulate_labelling


def test_uniform_probabilities_give_plain_ppi():
    """With p = 1/N the IPW estimator is PPI++ written out by hand: theta = lambda fbar +
    mean(y - lambda f) with lambda = Cov(y, f) / Var(f); lambda = 1 gives the classical PPI
    interval fbar + mean(y - f) +- z sd(y - f) / sqrt(n), lambda = 0 the labels' mean."""
    rng = np.random.default_rng(0)
    n_items, n = 1000, 80
    f_all = rng.random(n_items)
    idx = rng.choice(n_items, n, replace=False)
    f = f_all[idx]
    y = (rng.random(n) < f).astype(float)
    p = np.full(n, 1.0 / n_items)
    fbar = f_all.mean()
    got = active.ipw_ppi_mean(y, f, p, n_items=n_items, predictor_mean=fbar)
    lam = np.cov(y, f, ddof=0)[0, 1] / np.var(f)
    psi = y - lam * (f - fbar)
    assert got.lam == pytest.approx(lam, rel=1e-12)
    assert got.estimate == pytest.approx(lam * fbar + np.mean(y - lam * f), rel=1e-12)
    assert got.se == pytest.approx(np.std(psi, ddof=1) / np.sqrt(n), rel=1e-12)
    classical = active.ipw_ppi_mean(y, f, p, n_items=n_items, predictor_mean=fbar, lam=1.0)
    z = ndtri(0.975)
    half = z * np.std(y - f, ddof=1) / np.sqrt(n)
    assert classical.estimate == pytest.approx(fbar + np.mean(y - f), rel=1e-12)
    assert classical.upper - classical.estimate == pytest.approx(half, rel=1e-12)
    labels_only = active.ipw_ppi_mean(y, f, p, n_items=n_items, predictor_mean=fbar, lam=0.0)
    assert labels_only.estimate == pytest.approx(y.mean(), rel=1e-12)


def test_recorded_probabilities_are_used():
    """The weight of a label is 1/(N p) of its own recorded probability: doubling one
    label's probability halves its weight, and the Hansen-Hurwitz mean of the labels alone
    (lambda = 0, no shift) is mean(y / (N p))."""
    y = np.array([1.0, 0.0, 1.0, 1.0])
    f = np.array([0.9, 0.2, 0.4, 0.7])
    p = np.array([0.01, 0.02, 0.05, 0.01])
    got = active.ipw_ppi_mean(y, f, p, n_items=50, predictor_mean=0.5, lam=0.0)
    assert got.estimate == pytest.approx(np.mean(y / (50 * p)))
    p2 = p.copy()
    p2[0] *= 2
    again = active.ipw_ppi_mean(y, f, p2, n_items=50, predictor_mean=0.5, lam=0.0)
    assert got.estimate - again.estimate == pytest.approx((1 / 0.5 - 1 / 1.0) / 4)


def test_ipw_interval_covers_planted_mean():
    """Active draws from a planted language: the IPW interval covers the mean of all labels
    in about 95% of 300 sequences of 200 labels."""
    rng = np.random.default_rng(5)
    labels, scores = planted_items(rng, 5000, 6, "binary", "medium", "concentrated")
    f = scores.mean(axis=1)
    idx, p = simulate_labelling(rng, labels, scores, 300, 200, batch=20)
    fits = [active.ipw_ppi_mean(labels[i], f[i], q, n_items=5000, predictor_mean=f.mean())
            for i, q in zip(idx, p)]
    hits = [fit.lower <= labels.mean() <= fit.upper for fit in fits]
    assert 0.91 <= np.mean(hits) <= 0.99


def test_sampling_probabilities_bounded_and_normalised():
    spread = np.array([0.0, 0.0, 0.5, 0.5, 1.0])
    p = active.sampling_probabilities(spread, shared=0.0, scale=1.0, uniform_share=0.2)
    assert p.sum() == pytest.approx(1.0)
    assert p.min() == pytest.approx(0.2 / 5)         # bounded below by uniform_share / N
    assert p[4] == pytest.approx(0.8 * 1.0 / 2.0 + 0.04)
    # no fit yet (fewer than PILOT_MIN labels), no spread, or uniform: 1/N
    assert np.allclose(active.sampling_probabilities(spread), 0.2)
    assert np.allclose(active.sampling_probabilities(np.zeros(5), shared=0.0, scale=1.0), 0.2)
    assert np.allclose(active.sampling_probabilities(spread, shared=0.0, scale=1.0,
                                                     method="uniform"), 0.2)
    with pytest.raises(ValueError, match="sampling method"):
        active.sampling_probabilities(spread, method="greedy")


def test_error_model_finds_planted_line():
    """|y - yhat| = 0.1 + 2 spread exactly (yhat the line of y on f): the fit returns it."""
    rng = np.random.default_rng(1)
    f = rng.random(200)
    spread = rng.random(200)
    sign = np.where(rng.random(200) < 0.5, -1.0, 1.0)
    y = 3.0 + 2.0 * f + sign * (0.1 + 2.0 * spread)
    shared, scale = active.error_model(y, f, spread, np.ones(200))
    assert scale == pytest.approx(2.0, abs=0.1) and shared == pytest.approx(0.1, abs=0.1)
    assert np.isnan(active.error_model(y[:5], f[:5], spread[:5], np.ones(5))[0])


def test_draw_items_never_repeats_and_skips_labelled():
    rng = np.random.default_rng(2)
    p = np.full(10, 0.1)
    chosen = active.draw_items(p, 6, rng, exclude=[0, 1, 2, 3])
    assert len(chosen) == 6 and len(set(chosen)) == 6 and not set(chosen) & {0, 1, 2, 3}
    assert len(active.draw_items(p, 20, rng, exclude=[0])) == 9


def test_judge_spread_binary_and_missing():
    scores = np.array([[1, 1, 0, 0], [1, 1, 1, 1], [1, np.nan, 0, np.nan]], dtype=float)
    assert np.allclose(active.judge_spread(scores), [0.5, 0.0, 0.5])


def test_predictable_coefficients_use_only_earlier_batches():
    """A label's lambda is fitted on the batches before its own: changing a label of the
    last batch leaves every coefficient of that batch unchanged."""
    rng = np.random.default_rng(3)
    a, b, c = rng.normal(size=(3, 30, 1))
    ends = np.array([10, 20, 30])
    lam, shift = anytime.predictable_coefficients(a, b, c, ends)
    a2 = a.copy()
    a2[25] += 100.0
    lam2, shift2 = anytime.predictable_coefficients(a2, b, c, ends)
    assert np.array_equal(lam, lam2) and np.array_equal(shift, shift2)
    assert np.all(lam[:10] == 0)
    full, _ = anytime.tuned_coefficients(a[:20], b[:20], c[:20], axis=-2)
    assert lam[25, 0] == pytest.approx(full[0])


def test_anytime_covers_at_every_look_where_rechecked_fixed_n_does_not():
    """Planted binary language, 400 uniform sequences of 300 labels, a look every 10: the
    sequence misses at some look in at most 5%; the fixed-n interval rechecked at every look
    misses far more often."""
    rng = np.random.default_rng(4)
    labels, scores = planted_items(rng, 4000, 6, "binary", "medium", "even")
    f = scores.mean(axis=1)
    idx = rng.integers(0, 4000, size=(400, 300))
    ends = np.arange(10, 301, 10)
    est, low, up = anytime.anytime_ppi(labels[idx][..., None], f[idx][..., None], 1.0,
                                       f.mean(), label_range=(0, 1), batch_ends=ends)
    truth = labels.mean()
    miss = ((low[:, ends - 1, 0] > truth) | (up[:, ends - 1, 0] < truth)).any(axis=1)
    assert miss.mean() <= 0.05
    psi = labels[idx] - f[idx]
    t = np.arange(1, 301)
    mean = np.cumsum(psi, axis=1) / t
    sd = np.sqrt(np.maximum(np.cumsum(psi ** 2, axis=1) / t - mean ** 2, 0) * t / (t - 0.999))
    naive = (np.abs(mean + f.mean() - truth) > 1.96 * sd / np.sqrt(t))[:, ends - 1].any(axis=1)
    assert naive.mean() > 2 * miss.mean() + 0.1


def test_labels_needed_meets_target_exactly():
    sd, target = 0.4, 0.05
    need = int(anytime.labels_needed(sd, target))
    assert anytime.halfwidth_at(need, sd) <= target < anytime.halfwidth_at(need - 1, sd)
    assert int(anytime.labels_needed(sd, target, n_labels=need)) == 0
    assert int(anytime.labels_needed(sd, target, n_labels=need - 7, batch=5)) == 10
    assert int(anytime.labels_needed(sd, 1e-9)) == -1          # out of reach
