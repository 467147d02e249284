"""Simulation study: CBC is unbiased, the band covers near nominal, three-way effects are found."""
import numpy as np
import pytest

from judgecal.simulation import SCENARIO_COLUMNS, simulate_scenario

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
