"""Three-way ANOVA diagnostic and the task-bootstrap simultaneous band (docs/methods.md 10.3,
10.4)."""
import numpy as np
import pandas as pd
import pytest
import scipy.stats
from conftest import DEVAI_BACKBONES, DEVAI_LANGUAGES

from polyjudge.analyses import diagnostics
from polyjudge.cbc.band import bootstrap_band
from polyjudge.cbc.estimator import double_center, finite_sample_radius, residual_sd
from polyjudge.data.panel import Panel


def _runs(seed, shape=(6, 4, 3, 3), three_way_sd=0.0):
    """Runs = task + language x backbone + task x language + [three-way] + noise (SD 1)."""
    rng = np.random.default_rng(seed)
    n, k, m, _ = shape
    values = (rng.normal(0, 3, (n, 1, 1, 1)) + rng.normal(0, 2, (1, k, m, 1))
              + rng.normal(0, 1, (n, k, 1, 1)) + rng.normal(0, 1, shape))
    if three_way_sd:
        values = values + rng.normal(0, three_way_sd, (n, k, m, 1))
    return values


def _as_panel(values):
    n, k, m = values.shape
    return Panel(values, tuple(f"t{i:02d}" for i in range(n)), tuple(f"L{i}" for i in range(k)),
                 tuple(f"B{i}" for i in range(m)))


def test_anova_matches_statsmodels_on_a_balanced_example():
    smf = pytest.importorskip("statsmodels.formula.api")
    anova_lm = pytest.importorskip("statsmodels.stats.anova").anova_lm
    runs = _runs(0, shape=(4, 3, 3, 2), three_way_sd=0.5)
    t, l, b, f = np.meshgrid(*map(np.arange, runs.shape), indexing="ij")
    frame = pd.DataFrame({"t": t.ravel(), "l": l.ravel(), "b": b.ravel(), "y": runs.ravel()})
    peer = anova_lm(smf.ols("y ~ C(t) * C(l) * C(b)", frame).fit(), typ=1)
    ours = diagnostics.three_way_anova(runs).table.set_index("term")
    names = {"task": "C(t)", "language": "C(l)", "backbone": "C(b)", "task:language": "C(t):C(l)",
             "task:backbone": "C(t):C(b)", "language:backbone": "C(l):C(b)",
             "task:language:backbone": "C(t):C(l):C(b)", "residual": "Residual"}
    for term, peer_term in names.items():
        assert ours.loc[term, "ss"] == pytest.approx(peer.loc[peer_term, "sum_sq"], rel=1e-9)
        assert ours.loc[term, "df"] == peer.loc[peer_term, "df"]
        if term != "residual":
            assert ours.loc[term, "p"] == pytest.approx(peer.loc[peer_term, "PR(>F)"], rel=1e-6)


def test_anova_sums_of_squares_add_up():
    result = diagnostics.three_way_anova(_runs(1))
    table = result.table.set_index("term")
    parts = table.drop(index="total")
    assert parts["ss"].sum() == pytest.approx(table.loc["total", "ss"], rel=1e-12)
    assert parts["df"].sum() == table.loc["total", "df"]
    assert result.three_way_share == pytest.approx(
        table.loc["task:language:backbone", "ss"] / table.loc["total", "ss"])


def test_planted_three_way_effect_is_detected():
    result = diagnostics.three_way_anova(_runs(2, shape=(20, 4, 3, 3), three_way_sd=1.0))
    assert not result.adequate
    assert result.table.set_index("term").loc["task:language:backbone", "p"] < 1e-6
    assert result.three_way_variance == pytest.approx(1.0, rel=0.5)
    assert "not significant" in result.criterion


def test_without_three_way_effect_p_is_uniform():
    p = np.array([diagnostics.three_way_anova(_runs(seed)).table["p"].iloc[6]
                  for seed in range(300)])
    assert scipy.stats.kstest(p, "uniform").pvalue > 0.01
    assert 0.02 < (p < 0.05).mean() < 0.09  # the test holds its level: adequate ~95% of the time


def test_anova_validation():
    with pytest.raises(ValueError, match="repeats"):
        diagnostics.three_way_anova(np.zeros((3, 3, 3)))
    runs = _runs(3)
    runs[0, 0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="balanced"):
        diagnostics.three_way_anova(runs)


def test_replicate_array_from_a_run_table():
    runs = _runs(4, shape=(3, 2, 2, 2))
    t, l, b, f = np.meshgrid(*map(np.arange, runs.shape), indexing="ij")
    frame = pd.DataFrame({"task": [f"t{i}" for i in t.ravel()],
                          "language": np.array(["en", "sw"])[l.ravel()],
                          "backbone": np.array(["x", "y"])[b.ravel()],
                          "framework": [f"F{i}" for i in f.ravel()], "score": runs.ravel()})
    shuffled = frame.sample(frac=1, random_state=0)
    array = diagnostics.replicate_array(shuffled, languages=["sw", "en"])
    assert array.languages == ("sw", "en") and array.frameworks == ("F0", "F1")
    np.testing.assert_array_equal(array.values, runs[:, ::-1])
    with pytest.raises(ValueError, match="missing"):
        diagnostics.replicate_array(frame.iloc[1:])


def test_replicate_array_read_from_parquet_in_batches(tmp_path):
    """The workflow passes runs.parquet's path: the same array, labels and error."""
    runs = _runs(5, shape=(3, 2, 2, 3))
    t, l, b, f = np.meshgrid(*map(np.arange, runs.shape), indexing="ij")
    frame = pd.DataFrame({"task": [f"t{i}" for i in t.ravel()],
                          "language": np.array(["en", "sw"])[l.ravel()],
                          "backbone": np.array(["x", "y"])[b.ravel()],
                          "framework": [f"F{i}" for i in f.ravel()], "score": runs.ravel()})
    frame.sample(frac=1, random_state=1).to_parquet(tmp_path / "runs.parquet", row_group_size=5)
    read = diagnostics.replicate_array(tmp_path / "runs.parquet", languages=["sw", "en"])
    expected = diagnostics.replicate_array(frame, languages=["sw", "en"])
    assert (read.tasks, read.languages, read.frameworks) == (
        expected.tasks, expected.languages, expected.frameworks)
    np.testing.assert_array_equal(read.values, expected.values)
    frame.iloc[1:].to_parquet(tmp_path / "runs.parquet")
    with pytest.raises(ValueError, match="1 of 36 .* runs are missing"):
        diagnostics.replicate_array(tmp_path / "runs.parquet")


def test_devai_three_way_diagnostic(devai_runs):
    array = diagnostics.replicate_array(devai_runs, DEVAI_LANGUAGES, DEVAI_BACKBONES)
    assert array.values.shape == (55, 8, 6, 3)
    result = diagnostics.three_way_anova(array.values)
    table = result.table.set_index("term")
    assert table.loc["residual", "df"] == 55 * 8 * 6 * 2
    assert table.loc["task:language:backbone", "df"] == 54 * 7 * 5
    assert 0 < result.three_way_share < 1
    assert result.interaction_p < 1e-10  # beta stands out against the three-way term


# --- simultaneous band ---------------------------------------------------------------------------

def test_band_on_devai(devai_panel):
    band = bootstrap_band(devai_panel, n_replicates=2000, seed=0)
    frame = band.frame
    assert list(frame.columns) == ["language", "backbone", "beta", "se", "band_low", "band_high",
                                   "max_dev_low", "max_dev_high", "excludes_zero"]
    np.testing.assert_allclose(frame["beta"], double_center(devai_panel.cell_means()).ravel())
    assert band.radius_total_sd == pytest.approx(9.96, abs=0.005)  # the paper's radius
    assert band.radius_residual_sd == pytest.approx(
        finite_sample_radius(residual_sd(devai_panel.values), 55, 8, 6, 0.05))
    # max-|t| over 48 cells: above the single-cell normal quantile, near Bonferroni's 3.3
    assert 1.96 < band.critical_value < 4.5
    half_width = band.critical_value * frame["se"]
    assert half_width.mean() < band.radius_residual_sd < band.radius_total_sd
    assert half_width.max() < band.radius_total_sd / 1.5
    np.testing.assert_allclose(frame["band_high"] - frame["beta"], half_width)
    np.testing.assert_allclose(frame["max_dev_high"] - frame["beta"], band.max_dev_radius)
    assert band.max_dev_radius < band.radius_residual_sd
    # same seed, same band
    again = bootstrap_band(devai_panel, n_replicates=2000, seed=0)
    assert again.critical_value == band.critical_value


def test_band_validation():
    values = np.random.default_rng(0).normal(size=(10, 3, 3))
    with pytest.raises(ValueError, match="replicates"):
        bootstrap_band(_as_panel(values), n_replicates=10)
    values[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="complete"):
        bootstrap_band(_as_panel(values))


def test_band_coverage_near_nominal_and_union_radius_over_covers():
    n, k, m, n_panels = 55, 8, 6, 250
    rng = np.random.default_rng(11)
    beta = double_center(rng.normal(0, 8, (k, m)))
    covered = np.zeros((n_panels, 3), dtype=bool)
    for i in range(n_panels):
        values = (50 + rng.normal(0, 10, (n, 1, 1)) + rng.normal(0, 5, (1, 1, m)) + beta
                  + rng.normal(0, 5, (n, k, 1)) + rng.normal(0, 10, (n, k, m)))
        band = bootstrap_band(_as_panel(values), n_replicates=1000, seed=i)
        error = np.abs(band.frame["beta"].to_numpy() - beta.ravel())
        half_width = band.critical_value * band.frame["se"].to_numpy()
        covered[i] = [(error <= half_width).all(), (error <= band.radius_total_sd).all(),
                      (error <= band.radius_residual_sd).all()]
    band_coverage, total_sd, residual = covered.mean(axis=0)
    assert band_coverage == pytest.approx(0.95, abs=0.035)  # binomial SE 1.3 points
    assert total_sd == 1.0 and residual >= band_coverage
