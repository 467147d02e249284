"""Synthetic panels: the generator itself, and CBC recovering the planted interaction."""
from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf

from polyjudge.analyses.synthetic import SIMULATION_SETTINGS, axis_labels, simulate_panel
from polyjudge.cbc.estimator import double_center, fit_cbc
from polyjudge.data import io


def task_panel(synthetic, allow_missing_cells=False):
    """The framework-averaged task-level panel, through the same ingest as user data."""
    runs = io.validate_runs(synthetic.runs, "synthetic", score_range=None)
    return io.build_panel(runs, "synthetic", allow_missing_cells=allow_missing_cells)


def beta_error(synthetic, allow_missing_cells=False) -> np.ndarray:
    return (fit_cbc(task_panel(synthetic, allow_missing_cells)).beta
            - synthetic.truth["beta"].to_numpy())


# --- the generator ---------------------------------------------------------------------------

def test_same_seed_gives_identical_frames_and_truth():
    settings = dict(n_tasks=7, missing_fraction=0.2, three_way_sd=2.0, requirements_per_task=4)
    first, again, other = (simulate_panel(seed, **settings) for seed in (3, 3, 4))
    pd.testing.assert_frame_equal(first.runs, again.runs, check_exact=True)
    pd.testing.assert_frame_equal(first.requirements, again.requirements, check_exact=True)
    for key in ("beta", "gamma"):
        pd.testing.assert_frame_equal(first.truth[key], again.truth[key], check_exact=True)
    np.testing.assert_array_equal(first.truth["delta"], again.truth["delta"])
    assert not first.truth["beta"].equals(other.truth["beta"])
    assert not np.array_equal(first.runs["score"], other.runs["score"][:len(first.runs)])


def test_settings_are_recorded_and_reproduce_the_panel():
    panel = simulate_panel(5, n_tasks=4, n_languages=3, n_backbones=2, requirements_per_task=2)
    settings = panel.truth["settings"]
    assert tuple(settings) == SIMULATION_SETTINGS
    json.dumps(panel.truth_summary())  # JSON-ready
    pd.testing.assert_frame_equal(simulate_panel(**settings).requirements, panel.requirements)


def test_layout_labels_and_compact_dtypes():
    panel = simulate_panel(0, n_tasks=120, n_languages=12, n_backbones=3, n_frameworks=2)
    runs = panel.runs
    assert list(runs.columns) == ["task", "language", "backbone", "framework", "score"]
    assert len(runs) == 120 * 12 * 3 * 2
    assert axis_labels("t", 120, 2)[:2] == ["t001", "t002"] and axis_labels("L", 12)[9] == "L10"
    assert axis_labels("t", 55, 2)[0] == "t01" and axis_labels("B", 6) == [
        f"B{i}" for i in range(1, 7)]
    for axis in ("task", "language", "backbone", "framework"):
        categories = list(runs[axis].cat.categories)
        assert categories == sorted(categories)  # sorting the labels keeps the axis order
    # rows in (task, language, backbone, framework) order
    keys = runs[["task", "language", "backbone", "framework"]].astype(str)
    assert keys.equals(keys.sort_values(list(keys.columns), ignore_index=True))
    assert runs.memory_usage(deep=True).sum() / len(runs) < 16


def test_planted_beta_is_double_centred_with_the_stated_sd():
    beta = simulate_panel(1, n_languages=30, n_backbones=40, interaction_sd=4.0).truth["beta"]
    assert list(beta.index) == axis_labels("L", 30) and list(beta.columns) == axis_labels("B", 40)
    np.testing.assert_allclose(beta.sum(axis=0), 0, atol=1e-10)
    np.testing.assert_allclose(beta.sum(axis=1), 0, atol=1e-10)
    planted_sd = 4.0 * np.sqrt((1 - 1 / 30) * (1 - 1 / 40))
    assert beta.to_numpy().std() == pytest.approx(planted_sd, rel=0.05)


def test_truth_frames_are_tidy():
    panel = simulate_panel(2, n_tasks=5, n_languages=3, n_backbones=4)
    frames = panel.truth_frames()
    beta = frames["beta"]
    assert list(beta.columns) == ["language", "backbone", "beta_true"] and len(beta) == 12
    pivot = beta.pivot(index="language", columns="backbone", values="beta_true")
    pd.testing.assert_frame_equal(pivot, panel.truth["beta"], check_names=False)
    assert list(frames["alpha"].columns) == ["backbone", "alpha_true"]
    assert list(frames["mu"].columns) == ["task", "mu_true"] and len(frames["mu"]) == 5
    assert list(frames["gamma"].columns) == ["task", "language", "gamma_true"]
    assert len(frames["gamma"]) == 15


def test_components_have_independent_streams():
    """Changing the SD of gamma changes every run score by exactly the gamma difference."""
    base = dict(n_tasks=6, n_languages=3, n_backbones=2, clip=False)
    small, large = simulate_panel(9, task_language_sd=1.0, **base), \
        simulate_panel(9, task_language_sd=40.0, **base)
    for key in ("beta", "alpha", "mu"):
        pd.testing.assert_series_equal(pd.Series(small.truth[key].to_numpy().ravel()),
                                       pd.Series(large.truth[key].to_numpy().ravel()))
    diff = (large.truth["gamma"] - small.truth["gamma"]).stack()
    expected = diff.loc[list(zip(small.runs["task"], small.runs["language"]))].to_numpy()
    np.testing.assert_allclose(large.runs["score"] - small.runs["score"], expected, atol=1e-9)


def test_missing_cells_drop_every_framework_of_a_cell():
    panel = simulate_panel(4, n_tasks=20, n_frameworks=3, missing_fraction=0.25)
    runs_per_cell = panel.runs.groupby(["task", "language", "backbone"], observed=True).size()
    assert len(runs_per_cell) == 20 * 8 * 6 * 3 // 4 and (runs_per_cell == 3).all()
    with pytest.raises(ValueError, match="unbalanced panel: 240 of 960"):
        task_panel(panel)


def test_clipping():
    wide = dict(n_tasks=30, task_sd=40.0, noise_sd=40.0)
    clipped, raw = simulate_panel(0, clip=True, **wide), simulate_panel(0, clip=False, **wide)
    assert clipped.runs["score"].between(0, 100).all()
    assert ((raw.runs["score"] < 0) | (raw.runs["score"] > 100)).mean() > 0.05
    np.testing.assert_array_equal(clipped.runs["score"], raw.runs["score"].clip(0, 100))
    io.validate_runs(clipped.runs, "synthetic")  # passes the default [0, 100] check


def test_requirement_verdicts_give_the_run_scores():
    panel = simulate_panel(6, n_tasks=30, requirements_per_task=7, missing_fraction=0.1,
                           noise_sd=5.0)
    requirements, runs = panel.requirements, panel.runs
    assert list(requirements.columns) == io.REQUIREMENT_COLUMNS
    assert len(requirements) == 7 * len(runs) and set(requirements["satisfied"]) == {0, 1}
    recomputed = io.runs_from_requirements(requirements, "synthetic")
    merged = runs.merge(recomputed, on=io.RUN_KEYS, suffixes=("", "_requirements"), validate="1:1")
    assert len(merged) == len(runs)
    np.testing.assert_array_equal(merged["score"], merged["score_requirements"])
    assert (merged["n_requirements"] == 7).all()
    # the verdict rate is S / 100 on average: mean score = mean + mean effects (beta sums to 0)
    truth = panel.truth
    keys = runs[["task", "language", "backbone"]]
    expected = (50.0 + truth["mu"].loc[keys["task"]].to_numpy()
                + truth["alpha"].loc[keys["backbone"]].to_numpy()
                + truth["gamma"].stack().loc[list(zip(keys["task"], keys["language"]))].to_numpy())
    assert runs["score"].mean() == pytest.approx(expected.mean(), abs=1.0)


@pytest.mark.parametrize("bad, message", [
    (dict(n_languages=1), "n_languages must be an integer >= 2"),
    (dict(n_tasks=2.5), "n_tasks must be an integer >= 1"),
    (dict(noise_sd=-1.0), "noise_sd must be a finite number >= 0"),
    (dict(mean=float("nan")), "mean must be a finite number"),
    (dict(missing_fraction=1.0), r"missing_fraction must be in \[0, 1\)"),
    (dict(requirements_per_task=-3), "requirements_per_task must be an integer >= 0"),
    (dict(clip="yes"), "clip must be true or false"),
    (dict(seed=-1), "seed must be an integer >= 0"),
])
def test_invalid_settings(bad, message):
    with pytest.raises(ValueError, match=message):
        simulate_panel(**{"seed": 0, **bad})


# --- CBC on synthetic panels -------------------------------------------------------------------

def test_estimated_beta_is_double_centred():
    beta = fit_cbc(task_panel(simulate_panel(8))).beta
    np.testing.assert_allclose(beta.sum(axis=0), 0, atol=1e-10)
    np.testing.assert_allclose(beta.sum(axis=1), 0, atol=1e-10)


def test_error_shrinks_like_one_over_sqrt_n():
    """Mean squared error of beta is sigma^2 (1-1/k)(1-1/m) / n, sigma^2 = delta var + noise/F.

    mu, alpha and gamma cancel exactly on a complete panel, so only the task-level residual
    (three-way term plus framework-averaged noise) is left (docs/methods.md section 1).
    """
    sizes, seeds = np.array([10, 40, 160, 640]), range(12)
    settings = dict(three_way_sd=4.0, noise_sd=15.0, n_frameworks=3, clip=False)
    mse = np.array([[np.mean(beta_error(simulate_panel(seed, n_tasks=int(n), **settings)) ** 2)
                     for seed in seeds] for n in sizes]).mean(axis=1)
    slope = np.polyfit(np.log(sizes), 0.5 * np.log(mse), 1)[0]
    assert slope == pytest.approx(-0.5, abs=0.05)
    predicted = (4.0 ** 2 + 15.0 ** 2 / 3) * (1 - 1 / 8) * (1 - 1 / 6) / sizes
    np.testing.assert_allclose(mse / predicted, 1, atol=0.2)
    assert np.mean(mse / predicted) == pytest.approx(1, abs=0.1)


def test_task_language_term_cancels_exactly_on_a_complete_panel():
    base = dict(n_tasks=25, noise_sd=10.0, clip=False)
    without = beta_error(simulate_panel(12, task_language_sd=0.0, **base))
    with_gamma = beta_error(simulate_panel(12, task_language_sd=50.0, **base))
    np.testing.assert_allclose(with_gamma, without, atol=1e-9)


def test_task_language_term_does_not_bias_beta_with_missing_cells():
    """With missing cells gamma no longer cancels, but it adds variance, not bias."""
    settings = dict(n_tasks=20, task_language_sd=30.0, noise_sd=5.0, missing_fraction=0.2,
                    clip=False)
    errors = np.stack([beta_error(simulate_panel(seed, **settings), allow_missing_cells=True)
                       for seed in range(150)])
    z = errors.mean(axis=0) / (errors.std(axis=0, ddof=1) / np.sqrt(len(errors)))
    assert np.abs(z).max() < 4.0
    assert errors.std() > 2.0  # gamma really is in play (it would cancel on a complete panel)


# --- peer implementation: statsmodels OLS with sum contrasts ---------------------------------

def _sum_contrast_interaction(fit, languages, backbones) -> np.ndarray:
    """Full k x m interaction from the (k-1)(m-1) sum-contrast coefficients (last = minus sum)."""
    inner = np.zeros((len(languages) - 1, len(backbones) - 1))
    pattern = re.compile(r"C\(language, Sum\)\[S\.(\w+)\]:C\(backbone, Sum\)\[S\.(\w+)\]")
    for name, value in fit.params.items():
        match = pattern.fullmatch(name)
        if match:
            inner[languages.index(match[1]), backbones.index(match[2])] = value
    full = np.vstack([inner, -inner.sum(axis=0)])
    return np.hstack([full, -full.sum(axis=1, keepdims=True)])


def test_statsmodels_sum_contrast_interaction_equals_double_centring():
    panel = task_panel(simulate_panel(21, n_tasks=12, three_way_sd=3.0))
    beta = fit_cbc(panel).beta
    languages, backbones = list(panel.languages), list(panel.backbones)

    task_level = smf.ols("score ~ C(task, Sum) + C(language, Sum) * C(backbone, Sum)",
                         panel.to_frame()).fit()
    np.testing.assert_allclose(_sum_contrast_interaction(task_level, languages, backbones), beta,
                               atol=1e-8)
    anova = sm.stats.anova_lm(task_level, typ=2)
    assert anova.loc["C(language, Sum):C(backbone, Sum)", "sum_sq"] == \
        pytest.approx(len(panel.tasks) * (beta ** 2).sum(), rel=1e-8)

    cells = panel.matrix_frame(panel.cell_means(), "score")
    cell_level = smf.ols("score ~ C(language, Sum) * C(backbone, Sum)", cells).fit()
    np.testing.assert_allclose(_sum_contrast_interaction(cell_level, languages, backbones),
                               double_center(panel.cell_means()), atol=1e-8)
