"""Simulation study: CBC is unbiased, the band covers near nominal, three-way effects are found."""
import numpy as np
import pytest

from polyjudge.analyses.simulation import SCENARIO_COLUMNS, simulate_scenario

BASE = dict(n_tasks=30, n_languages=5, n_backbones=4, n_frameworks=3, mean=50.0, task_sd=15.0,
            backbone_sd=8.0, interaction_sd=6.0, task_language_sd=10.0, three_way_sd=0.0,
            noise_sd=10.0, clip=False)


def test_scenario_row_has_every_column_and_is_seeded():
    row = simulate_scenario("base", BASE, 20, seed=3, band_replicates=200)
    assert list(row) == SCENARIO_COLUMNS
    assert row == simulate_scenario("base", BASE, 20, seed=3, band_replicates=200)


def test_cbc_unbiased_under_task_language_effects_and_band_near_nominal():
    row = simulate_scenario("base", BASE, 300, seed=5, band_replicates=300)
    # bias is the mean error over all cells and panels: its SE is about rmse / sqrt(cells x panels)
    assert abs(row["bias"]) < 4 * row["rmse"] / np.sqrt(20 * 300)
    assert row["coverage_radius_total"] >= 0.99          # the union radius over-covers
    assert row["coverage_band"] == pytest.approx(0.95, abs=0.04)
    assert row["band_mean_half_width"] < row["radius_total_mean"] / 2
    assert row["three_way_detection"] < 0.12              # no three-way effect planted


def test_planted_three_way_effect_is_detected():
    row = simulate_scenario("three_way", dict(BASE, three_way_sd=4.0), 30, seed=7,
                            band_replicates=200)
    assert row["three_way_detection"] > 0.9


# --- the stacked engine against the per-panel functions it vectorises ----------------------------
from polyjudge.analyses.diagnostics import three_way_anova  # noqa: E402
from polyjudge.analyses.simulation import (  # noqa: E402
    draw_panels,
    stacked_band,
    stacked_residual_sd,
    stacked_three_way_p,
    task_bootstrap_counts,
)
from polyjudge.analyses.synthetic import simulate_panel  # noqa: E402
from polyjudge.cbc.band import bootstrap_band  # noqa: E402
from polyjudge.cbc.bootstrap import task_bootstrap  # noqa: E402
from polyjudge.cbc.estimator import residual_sd  # noqa: E402
from polyjudge.data.io import build_panel  # noqa: E402

SMALL = dict(BASE, n_tasks=12, n_languages=4, n_backbones=3, three_way_sd=2.0)


@pytest.mark.parametrize("extra", [{}, {"clip": True}, {"requirements_per_task": 5}])
def test_one_stacked_panel_is_simulate_panel(extra):
    settings = dict(SMALL, **extra)
    stacked = draw_panels(np.random.SeedSequence(9), 1, settings)
    draw = simulate_panel(9, **settings)
    runs = draw.runs.sort_values(["task", "language", "backbone", "framework"])
    np.testing.assert_array_equal(stacked["runs"][0].ravel(), runs["score"].to_numpy())
    np.testing.assert_array_equal(stacked["beta"][0], draw.truth["beta"].to_numpy())
    np.testing.assert_array_equal(stacked["alpha"][0], draw.truth["alpha"].to_numpy())


def test_stacked_band_residual_sd_and_anova_match_the_per_panel_functions():
    panels = draw_panels(np.random.SeedSequence(4), 3, SMALL)
    values = panels["runs"].mean(axis=-1)
    counts = np.stack([task_bootstrap(12, 200, seed).counts for seed in range(3)])
    band = stacked_band(values, counts, 0.9)
    sd, p = stacked_residual_sd(values), stacked_three_way_p(panels["runs"])
    for i in range(3):
        panel = build_panel(simulate_panel_frame(panels["runs"][i]), "test")
        single = bootstrap_band(panel, 200, seed=i, level=0.9)
        np.testing.assert_allclose(band["beta"][i].ravel(), single.frame["beta"], atol=1e-12)
        np.testing.assert_allclose(band["se"][i].ravel(), single.frame["se"], rtol=1e-12)
        assert band["critical"][i] == pytest.approx(single.critical_value, rel=1e-9)
        assert sd[i] == pytest.approx(residual_sd(panel.values), rel=1e-12)
        assert p[i] == pytest.approx(three_way_anova(panels["runs"][i]).table["p"].iloc[6],
                                     rel=1e-9, abs=1e-300)


def simulate_panel_frame(runs):
    """A (n, k, m, F) run array as a standard run table."""
    import pandas as pd
    index = pd.MultiIndex.from_product([[f"t{i:02d}" for i in range(runs.shape[0])],
                                        [f"L{i}" for i in range(runs.shape[1])],
                                        [f"B{i}" for i in range(runs.shape[2])],
                                        [f"F{i}" for i in range(runs.shape[3])]],
                                       names=["task", "language", "backbone", "framework"])
    return pd.DataFrame({"score": runs.ravel()}, index=index).reset_index()


def test_bootstrap_counts_are_multiplicities():
    counts = task_bootstrap_counts(np.random.default_rng(0), 4, 50, 7)
    assert counts.shape == (4, 50, 7) and (counts.sum(axis=-1) == 7).all()


def test_missing_cells_are_refused():
    with pytest.raises(ValueError, match="complete panels"):
        simulate_scenario("m", dict(SMALL, missing_fraction=0.1), 3, seed=1)


# --- coverage of the leaderboard's rank intervals ----------------------------------------------
from polyjudge.analyses.leaderboard import leaderboard  # noqa: E402
from polyjudge.analyses.simulation import (  # noqa: E402
    RANK_COVERAGE_COLUMNS,
    planted_ranks,
    rank_coverage,
    simulate_rank_coverage,
    stacked_rank_replicates,
)
from polyjudge.analyses.leaderboard import rank_interval, rank_sets  # noqa: E402
from polyjudge.cbc.estimator import double_center, rank_within_language  # noqa: E402


def test_stacked_rank_intervals_are_the_leaderboards_panel_by_panel():
    panels = draw_panels(np.random.SeedSequence(6), 3, dict(SMALL, backbone_sd=1.0))
    values = panels["runs"].mean(axis=-1)
    counts = np.stack([task_bootstrap(12, 150, seed).counts for seed in range(3)])
    replicates = stacked_rank_replicates(values, counts)
    truth = planted_ranks(panels["alpha"], panels["beta"])
    means = values.mean(axis=1)
    point = {"raw": means, "cbc": means - double_center(means)}
    for ranking, draws in replicates.items():
        low, high = rank_interval(draws, 0.9, axis=1)
        set_low, set_high = rank_sets(point[ranking], draws, 0.9)
        for i in range(3):
            board = leaderboard(build_panel(simulate_panel_frame(panels["runs"][i]), "test"),
                                n_replicates=150, level=0.9, seed=i)
            assert (low[i].ravel() == board[f"rank_{ranking}_low"]).all(), ranking
            assert (high[i].ravel() == board[f"rank_{ranking}_high"]).all(), ranking
            simultaneous = f"rank_{ranking}_simultaneous"
            assert (set_low[i].ravel() == board[f"{simultaneous}_low"]).all(), ranking
            assert (set_high[i].ravel() == board[f"{simultaneous}_high"]).all(), ranking
    assert (low < high).any()  # close backbones: some intervals allow several ranks
    for i in range(3):
        planted = panels["alpha"][i] + panels["beta"][i]
        assert (truth["raw"][i] == rank_within_language(planted)).all()
        assert (truth["cbc"][i] == rank_within_language(panels["alpha"][i][None, :])).all()


def test_far_apart_backbones_have_their_true_rank_pinned():
    settings = dict(SMALL, backbone_sd=100.0, interaction_sd=1.0, noise_sd=0.1, three_way_sd=0.0)
    rows = simulate_rank_coverage("apart", settings, 20, seed=2, n_replicates=100)
    assert [list(row) for row in rows] == [RANK_COVERAGE_COLUMNS] * 4
    assert [(row["ranking"], row["interval"]) for row in rows] == [
        ("raw", "marginal"), ("raw", "simultaneous"), ("cbc", "marginal"),
        ("cbc", "simultaneous")]
    for row in rows:
        assert (row["coverage"], row["coverage_language"], row["mean_length"]) == (1, 1, 1)
    assert rows == simulate_rank_coverage("apart", settings, 20, seed=2, n_replicates=100)


def test_interchangeable_backbones_get_intervals_over_every_rank():
    # backbone b scores 1 on task b and 0 elsewhere in every language: tied in the population
    # (so every true rank is 1), and a resample of the tasks can put any of them in any place
    m = 3
    runs = np.eye(m)[:, None, :, None] * np.ones((1, 2, 1, 1))  # (task, language, backbone, 1)
    board = leaderboard(build_panel(simulate_panel_frame(runs), "tied"), n_replicates=400)
    truth = np.ones((2, m), dtype=int)
    for ranking in ("raw", "cbc"):
        low = board[f"rank_{ranking}_low"].to_numpy().reshape(2, m)
        high = board[f"rank_{ranking}_high"].to_numpy().reshape(2, m)
        assert (low == 1).all() and (high == m).all()
        assert rank_coverage(low, high, truth) == {"coverage": 1.0, "coverage_language": 1.0,
                                                   "mean_length": m}
        sets = [board[f"rank_{ranking}_simultaneous_{end}"].to_numpy().reshape(2, m)
                for end in ("low", "high")]
        assert (sets[0] == 1).all() and (sets[1] == m).all()


def test_rank_coverage_counts_intervals_and_languages():
    low = np.array([[1, 1, 3], [1, 2, 2]])
    high = np.array([[2, 2, 3], [1, 3, 3]])
    truth = np.array([[1, 2, 3], [2, 1, 3]])  # language 1: all covered; language 2: one of 3
    assert rank_coverage(low, high, truth) == {"coverage": 4 / 6, "coverage_language": 0.5,
                                               "mean_length": 10 / 6}


def test_rank_coverage_needs_enough_replicates():
    with pytest.raises(ValueError, match="at least 100 replicates"):
        simulate_rank_coverage("few", SMALL, 2, seed=1, n_replicates=50)
