"""PPI++ means (polyjudge.analyses.labels.ppi): ppi_py's estimate and interval on a shipped
panel, the finite population's known answers, power tuning and the pseudo-items."""
from pathlib import Path

import numpy as np
import pytest
from scipy.special import ndtri

from polyjudge.analyses.labels import classical_mean, ppi_mean, tuned_lambda

DATA = Path(__file__).resolve().parents[1] / "data"
Z = ndtri(0.975)


@pytest.fixture(scope="module")
def devai():
    """DevAI's MetaGPT requirements: human labels and the original agent's labels."""
    import pandas as pd
    long = pd.read_parquet(DATA / "devai_original/requirement_labels_long.parquet")
    long = long[long["framework"] == "MetaGPT"]
    wide = long.pivot_table(index=["task", "requirement_id"], columns="judge",
                            values="satisfied")
    return wide["human"].to_numpy(float), wide["agent_gray_box"].to_numpy(float)


@pytest.mark.parametrize("lam", [None, 1.0, 0.5])
def test_equals_ppi_py_on_devai(devai, lam):
    ppi_py = pytest.importorskip("ppi_py")
    human, agent = devai
    labelled = np.random.default_rng(3).choice(len(human), 100, replace=False)
    unlabelled = np.setdiff1d(np.arange(len(human)), labelled)
    y, f, f_unl = human[labelled], agent[labelled], agent[unlabelled]
    ours = ppi_mean(y, f, f_unl, lam=lam)
    low, high = ppi_py.ppi_mean_ci(y, f, f_unl, alpha=0.05, lam=lam)
    point = ppi_py.ppi_mean_pointestimate(y, f, f_unl, lam=lam)
    assert ours.estimate == pytest.approx(float(np.squeeze(point)), abs=1e-6)
    assert ours.ci_low == pytest.approx(float(np.squeeze(low)), abs=1e-6)
    assert ours.ci_high == pytest.approx(float(np.squeeze(high)), abs=1e-6)


def test_equals_ppi_py_with_a_multilingual_judge():
    ppi_py = pytest.importorskip("ppi_py")
    import pandas as pd
    verdicts = pd.read_parquet(DATA / "devai_ml_aaaj/requirement_judgments.parquet")
    judge = verdicts[(verdicts["language"] == "Hindi") & (verdicts["backbone"] == "gpt-4o")]
    human = pd.read_parquet(DATA / "devai_original/requirement_labels_long.parquet")
    human = human[human["judge"] == "human"]
    both = judge.merge(human, on=["framework", "task", "requirement_id"], suffixes=("", "_h"))
    f_all, y_all = both["satisfied"].to_numpy(float), both["satisfied_h"].to_numpy(float)
    labelled = np.random.default_rng(5).choice(len(y_all), 150, replace=False)
    mask = np.zeros(len(y_all), bool)
    mask[labelled] = True
    ours = ppi_mean(y_all[mask], f_all[mask], f_all[~mask])
    low, high = ppi_py.ppi_mean_ci(y_all[mask], f_all[mask], f_all[~mask], alpha=0.05)
    assert (ours.ci_low, ours.ci_high) == pytest.approx(
        (float(np.squeeze(low)), float(np.squeeze(high))), abs=1e-6)


def test_lambda_zero_is_the_classical_interval():
    y = np.array([0.0, 1, 1, 0, 1, 1, 0, 1])
    big_n = 40
    got = ppi_mean(y, np.arange(8.0), np.arange(40.0), lam=0.0, n_population=big_n, pseudo=0)
    se = np.sqrt((1 - 8 / big_n) * y.var(ddof=1) / 8)
    assert got.estimate == pytest.approx(y.mean())
    assert (got.ci_low, got.ci_high) == pytest.approx((y.mean() - Z * se, y.mean() + Z * se))
    assert classical_mean(y, n_population=big_n, pseudo=0).se == pytest.approx(se)
    plain = classical_mean(y)  # superpopulation: ppi_py's classical interval (divisor n)
    assert plain.se == pytest.approx(y.std() / np.sqrt(8))


def test_a_predictor_equal_to_the_labels_gives_the_population_mean():
    rng = np.random.default_rng(0)
    population = rng.random(200)
    sample = rng.choice(200, 30, replace=False)
    got = ppi_mean(population[sample], population[sample], population, n_population=200,
                   pseudo=0)
    assert got.lam == pytest.approx(1.0)
    assert got.estimate == pytest.approx(population.mean())
    assert got.width == pytest.approx(0.0, abs=1e-12)
    # every item labelled: the finite-population correction leaves no width, pseudo or not
    whole = ppi_mean(population, population, population, n_population=200)
    assert whole.estimate == pytest.approx(population.mean()) and whole.width == 0


def test_tuned_lambda_is_the_regression_slope_and_shrinks_the_interval():
    rng = np.random.default_rng(1)
    f_all = rng.normal(size=500)
    y_all = 0.7 * f_all + rng.normal(scale=0.5, size=500)
    idx = rng.choice(500, 80, replace=False)
    slope = np.polyfit(f_all[idx], y_all[idx], 1)[0]
    assert tuned_lambda(y_all[idx], f_all[idx], f_all, n_population=500) == pytest.approx(slope)
    tuned = ppi_mean(y_all[idx], f_all[idx], f_all, n_population=500)
    alone = classical_mean(y_all[idx], n_population=500)
    assert tuned.width < 0.8 * alone.width


def test_the_pseudo_items_keep_a_perfect_sample_from_a_zero_width():
    population = np.r_[np.zeros(90), np.ones(10)]
    judge = population.copy()
    judge[:5] = 1  # five disagreements, none in the sample below
    sample = np.arange(50, 100)
    bare = ppi_mean(population[sample], judge[sample], judge, n_population=100, pseudo=0)
    padded = ppi_mean(population[sample], judge[sample], judge, n_population=100,
                      label_range=(0, 1))
    assert bare.width == 0 and padded.width > 0
    assert padded.estimate == bare.estimate  # the pseudo-items touch the variance only


def test_vectorised_over_draws_equals_one_at_a_time():
    rng = np.random.default_rng(2)
    f_all = rng.random(300)
    y_all = (rng.random(300) < f_all).astype(float)
    idx = np.argsort(rng.random((7, 300)), axis=1)[:, :40]
    many = ppi_mean(y_all[idx], f_all[idx], f_all, n_population=300, label_range=(0, 1))
    for d in range(7):
        one = ppi_mean(y_all[idx[d]], f_all[idx[d]], f_all, n_population=300,
                       label_range=(0, 1))
        assert (many.estimate[d], many.ci_low[d], many.lam[d]) == pytest.approx(
            (one.estimate, one.ci_low, one.lam))
