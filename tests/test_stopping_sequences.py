"""Confidence sequences (polyjudge.analyses.stopping.sequences): closed forms, a loop
implementation of each formula, the small-sample guards, coverage by simulation, and the
reference package `ville`."""
import math

import numpy as np
import pytest

from polyjudge.analyses.stopping import sequences as seq


def test_mixture_boundary_matches_a_hand_computed_value():
    # t = 100, sd = 1, alpha = 0.05, rho = 0.1: t rho^2 = 1, so
    # sqrt(2 * 2 / (100^2 * 0.01) * log(sqrt(2) / 0.05)) = sqrt(0.04 * 3.342347) = 0.365639
    assert seq.mixture_boundary(100, 1.0, 0.05, 0.1) == pytest.approx(0.3656395, abs=1e-6)
    assert seq.mixture_boundary(100, 2.5, 0.05, 0.1) == pytest.approx(2.5 * 0.3656395, abs=1e-6)


def test_mixture_boundary_is_the_level_set_of_robbins_mixture_martingale():
    # the N(0, rho^2) mixture of exp(lambda S - lambda^2 t / 2) is
    # (1 + rho^2 t)^(-1/2) exp(rho^2 S^2 / (2 (1 + rho^2 t))); it equals 1/alpha at S = t * u_t
    t, rho, alpha = np.array([5.0, 50.0, 500.0, 5000.0]), 0.07, 0.01
    s = t * seq.mixture_boundary(t, 1.0, alpha, rho)
    log_m = -0.5 * np.log1p(rho ** 2 * t) + rho ** 2 * s ** 2 / (2 * (1 + rho ** 2 * t))
    np.testing.assert_allclose(log_m, -math.log(alpha), rtol=1e-12)


def test_mixture_rho_nearly_minimises_the_width_at_the_tuning_time():
    alpha, t_star = 0.005, 500
    grid = np.exp(np.linspace(np.log(1e-3), np.log(10), 4001))
    best = seq.mixture_boundary(t_star, 1.0, alpha, grid).min()
    tuned = seq.mixture_boundary(t_star, 1.0, alpha, seq.mixture_rho(alpha, t_star))
    assert best <= tuned <= 1.01 * best


def loop_asymptotic(x, alpha, t_star):
    rho = seq.mixture_rho(alpha, t_star)
    out = []
    for t in range(1, len(x) + 1):
        sd = np.std(x[:t])
        half = sd * math.sqrt(2 * (t * rho ** 2 + 1) / (t ** 2 * rho ** 2)
                              * math.log(math.sqrt(t * rho ** 2 + 1) / alpha)) \
            if sd > 0 else np.inf
        out.append((np.mean(x[:t]), half))
    return np.array(out)


def test_asymptotic_cs_equals_a_loop_over_time_for_each_quantity():
    rng = np.random.default_rng(1)
    x = rng.normal([3.0, -1.0], [0.5, 2.0], size=(60, 2))
    mean, half = seq.asymptotic_cs(x, np.array([0.01, 0.05]), 40)
    for q, alpha in enumerate([0.01, 0.05]):
        expected = loop_asymptotic(x[:, q], alpha, 40)
        np.testing.assert_allclose(mean[:, q], expected[:, 0], rtol=1e-12)
        np.testing.assert_allclose(half[:, q], expected[:, 1], rtol=1e-9)


def test_the_asymptotic_half_width_is_infinite_until_the_observations_differ():
    x = np.array([[2.0], [2.0], [2.0], [3.0]])
    mean, half = seq.asymptotic_cs(x, 0.05, 10)
    assert np.isinf(half[:3, 0]).all() and np.isfinite(half[3, 0])
    np.testing.assert_allclose(mean[:, 0], [2.0, 2.0, 2.0, 2.25])


def test_the_asymptotic_guards_hold_the_width_open_on_few_or_equal_values():
    # one informative block in 20 (a calibrated pass/fail pair, values in eighths, range
    # [-1, 1]): the plain interval [-0.019, 0.032] excludes a true 0.04; regularised by one
    # pseudo-observation of the range's largest variance (1), it does not
    x = np.zeros((40, 1))
    x[5, 0] = 0.125
    mean, plain = seq.asymptotic_cs(x, 0.001, 20)
    _, guarded = seq.asymptotic_cs(x, 0.001, 20, prior_var=1.0, prior_n=1.0)
    assert mean[19, 0] + plain[19, 0] < 0.04 < mean[19, 0] + guarded[19, 0]
    # the burn-in: no interval before 20 non-zero values, whatever the variance
    x = np.where(np.arange(60)[:, None] % 2 == 0, 1.0, 0.0)
    _, half = seq.asymptotic_cs(x, 0.01, 30, min_nonzero=20)
    assert np.isinf(half[:38, 0]).all() and np.isfinite(half[38:, 0]).all()


def loop_betting(x, alpha, lo, hi, grid, cap=0.5):
    """WSR (2024)'s hedged capital written one observation and one candidate at a time: the
    interval of candidates not rejected, widened to the neighbouring rejected candidates."""
    y = [(v - lo) / (hi - lo) for v in x]
    bounds, var_prev, sum_y, sum_dev = [], 0.25, 0.0, 0.0
    log_up = {c: 0.0 for c in grid}
    log_down = {c: 0.0 for c in grid}
    for i, yi in enumerate(y, start=1):
        lam = math.sqrt(2 * math.log(2 / alpha) / (var_prev * i * math.log(1 + i)))
        for c in grid:
            m = (c - lo) / (hi - lo)
            log_up[c] += math.log1p(min(lam, cap / m) * (yi - m))
            log_down[c] += math.log1p(-min(lam, cap / (1 - m)) * (yi - m))
        threshold = math.log(2 / alpha)
        below = [c for c in grid if log_up[c] >= threshold]
        above = [c for c in grid if log_down[c] >= threshold]
        bounds.append((max(below, default=lo), min(above, default=hi)))
        sum_y += yi
        mu = (0.5 + sum_y) / (i + 1)
        sum_dev += (yi - mu) ** 2
        var_prev = (0.25 + sum_dev) / (i + 1)
    return np.array(bounds)


def test_betting_cs_equals_the_formula_written_as_a_loop():
    rng = np.random.default_rng(2)
    x = np.stack([rng.uniform(0, 1, 60), rng.beta(2, 5, 60) * 16 - 8], axis=1)
    lo, hi = np.array([0.0, -8.0]), np.array([1.0, 8.0])
    grid = seq.betting_grid(lo, hi, 40, points=(np.array([0.3, 0.0]),))
    lower, upper = seq.betting_cs(x, np.array([0.05, 0.001]), lo, hi, grid)
    for q, alpha in enumerate([0.05, 0.001]):
        expected = loop_betting(x[:, q], alpha, lo[q], hi[q], list(grid[:, q]))
        # the reported bounds are the next floats inside the rejected candidates
        np.testing.assert_allclose(lower[:, q], expected[:, 0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(upper[:, q], expected[:, 1], rtol=1e-12, atol=1e-12)
        assert (lower[:, q] <= upper[:, q]).all()


def ever_missed(lower, upper, truth, start=0):
    """Per simulated stream: did the interval miss the truth at some time >= start?"""
    return ((lower[:, start:] > truth) | (upper[:, start:] < truth)).any(axis=(1, 2))


def test_sequences_cover_at_every_time_and_the_rechecked_t_interval_does_not():
    # 1,000 streams of 300 i.i.d. observations, alpha 0.1; each stream is one (t, 1) array
    rng = np.random.default_rng(3)
    alpha, n_streams = 0.1, 1000
    normal = rng.normal(0.3, 1.0, size=(n_streams, 300, 1))
    mean, half = seq.asymptotic_cs(normal, alpha, 150)
    miss_asym = ever_missed(mean - half, mean + half, 0.3, start=20).mean()
    mean, half = seq.fixed_n_interval(normal, alpha)
    miss_naive = ever_missed(mean - half, mean + half, 0.3, start=20).mean()
    skewed = rng.beta(0.5, 3.0, size=(n_streams, 300, 1))
    truth = 0.5 / 3.5
    lower, upper = seq.betting_cs(skewed, alpha, 0.0, 1.0,
                                  seq.betting_grid(0.0, 1.0, 50, points=(truth,)))
    miss_bounded = ever_missed(lower, upper, truth).mean()
    mc = 3 * math.sqrt(alpha * (1 - alpha) / n_streams)  # three Monte-Carlo standard errors
    assert miss_asym <= alpha + mc
    assert miss_bounded <= alpha  # exact and conservative
    assert miss_naive > 2.5 * alpha  # a fixed-n 90% interval rechecked 280 times


def test_the_fixed_n_interval_is_the_student_t_interval():
    x = np.array([[1.0], [2.0], [4.0], [7.0]])
    mean, half = seq.fixed_n_interval(x, 0.05)
    # t(0.975, 3 df) = 3.182446 (tables), sd with ddof 1, n = 4
    sd = math.sqrt(((x - 3.5) ** 2).sum() / 3)
    assert mean[-1, 0] == pytest.approx(3.5)
    assert half[-1, 0] == pytest.approx(3.182446305 * sd / 2, rel=1e-9)
    assert np.isinf(half[0, 0])


def test_agrees_with_the_reference_package_ville():
    ville = pytest.importorskip("ville")
    rng = np.random.default_rng(4)
    x = rng.normal(0.2, 0.6, size=300).clip(-8, 8)
    # ville's hedged-capital betting CS on its own grid of 2,001 candidates in [0, 1] (ours on
    # the same candidates): both widen to the neighbouring rejected candidate
    bet = ville.BettingCS(bounds=(-8, 8), alpha=0.01, grid=2001, intersect=False).fit(x)
    candidates = -8 + 16 * np.linspace(0, 1, 2001)[1:-1, None]
    lower, upper = seq.betting_cs(x[:, None], 0.01, -8.0, 8.0, candidates)
    step = 16 / 2000
    np.testing.assert_allclose(lower[:, 0], bet.lower_, atol=step * 1.001)
    np.testing.assert_allclose(upper[:, 0], bet.upper_, atol=step * 1.001)
    assert (np.abs(lower[:, 0] - bet.lower_) > 1e-9).mean() < 0.5
    # ville's asymptotic CS: the same boundary in its precision parametrisation (1 / rho^2),
    # with its numerically optimised rho and ddof-1 variance
    rho = seq.mixture_rho(0.01, 100)
    t = np.arange(2, 301)
    np.testing.assert_allclose(ville.normal_mixture(t, 0.01, 1 / rho ** 2) / t,
                               seq.mixture_boundary(t, 1.0, 0.01, rho), rtol=1e-12)
    assert 1 / math.sqrt(ville.best_rho(100, 0.01)) == pytest.approx(rho, rel=0.05)
    cs = ville.AsymptoticCS(alpha=0.01, t_opt=100, min_samples=2, intersect=False).fit(x)
    mean, half = seq.asymptotic_cs(x[:, None], 0.01, 100)
    np.testing.assert_allclose(cs.estimate_, mean[:, 0], rtol=1e-10)
    ratio = (cs.upper_ - cs.estimate_)[50:] / half[50:, 0]
    np.testing.assert_allclose(ratio, 1.0, atol=0.02)  # rho and ddof differ a little


def test_the_small_sample_factor_is_the_student_t_over_normal_quantile():
    # t(0.975, 3 df) = 3.182446 and z(0.975) = 1.959964 (tables), times sqrt(4/3) for ddof 1
    assert seq.small_sample_factor(4, 0.05) == pytest.approx(3.182446305 / 1.959963985
                                                             * math.sqrt(4 / 3), rel=1e-9)
    # it vanishes as items grow, and grows as the error is split over more quantities
    assert seq.small_sample_factor(10 ** 6, 0.001) == pytest.approx(1.0, abs=1e-4)
    assert seq.small_sample_factor(20, 0.05 / 183) > seq.small_sample_factor(20, 0.05) > 1
    x = np.random.default_rng(0).normal(size=(50, 2))
    mean, plain = seq.asymptotic_cs(x, 0.01, 20)
    _, wide = seq.asymptotic_cs(x, 0.01, 20, small_sample=True)
    factor = seq.small_sample_factor(np.arange(3, 51)[:, None], 0.01)
    np.testing.assert_allclose(wide[2:] / plain[2:], np.repeat(factor, 2, axis=1))
