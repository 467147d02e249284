"""Simulation study of CBC on the synthetic additive-model panels (issue 10, part 5).

For each scenario of a grid (panel sizes, noise, task x language effects, three-way effects),
many panels are drawn with :func:`judgecal.synthetic.simulate_panel` and CBC is fitted on each:

* bias and RMSE of ``beta_hat - beta_true`` over all cells and panels;
* coverage of the Gaussian union radius (total-SD and residual-SD sigma) and of the task-bootstrap
  simultaneous band: the share of panels in which *every* cell's true beta lies inside;
* rank recovery: the share of panels where the order after CBC (the column means) equals the
  order of the true backbone effects, and the mean Kendall tau between them;
* the three-way diagnostic's detection rate (share of panels with p < alpha), when there are
  repeats (frameworks).
"""
from __future__ import annotations

import numpy as np
import scipy.stats

from .diagnostics import bootstrap_band, three_way_anova
from .estimator import double_center
from .io import build_panel
from .synthetic import simulate_panel

SCENARIO_COLUMNS = ["scenario", "n_tasks", "n_languages", "n_backbones", "n_frameworks",
                    "noise_sd", "task_language_sd", "three_way_sd", "n_panels", "bias", "rmse",
                    "coverage_radius_total", "coverage_radius_residual", "coverage_band",
                    "band_mean_half_width", "radius_total_mean", "rank_recovery",
                    "rank_tau_mean", "three_way_detection"]


def simulate_scenario(name: str, settings: dict, n_panels: int, seed: int,
                      band_replicates: int = 500, level: float = 0.95,
                      alpha: float = 0.05) -> dict:
    """One row of the study: ``n_panels`` panels drawn with ``settings`` (simulate_panel's
    keyword arguments, without the seed); panel ``i`` uses the i-th child of ``SeedSequence(seed)``.
    """
    seeds = np.random.SeedSequence(seed).spawn(n_panels)
    errors, covered_total, covered_residual, covered_band = [], [], [], []
    half_widths, radii, same_order, rank_tau, detected = [], [], [], [], []
    for child in seeds:
        draw = simulate_panel(int(child.generate_state(1)[0]), **settings)
        panel = build_panel(draw.runs, "simulation")
        truth = draw.truth["beta"].loc[list(panel.languages), list(panel.backbones)].to_numpy()
        beta = double_center(panel.cell_means())
        error = np.abs(beta - truth)
        errors.append(beta - truth)
        band = bootstrap_band(panel, band_replicates, int(child.generate_state(2)[1]), level)
        frame = band.frame
        covered_total.append(bool((error <= band.radius_total_sd).all()))
        covered_residual.append(bool((error <= band.radius_residual_sd).all()))
        inside = (frame["band_low"].to_numpy() <= truth.ravel()) & \
                 (truth.ravel() <= frame["band_high"].to_numpy())
        covered_band.append(bool(inside.all()))
        half_widths.append(float((frame["band_high"] - frame["beta"]).mean()))
        radii.append(band.radius_total_sd)
        alpha_true = draw.truth["alpha"].loc[list(panel.backbones)].to_numpy()
        calibrated_order = panel.cell_means().mean(axis=0)
        same_order.append(bool((np.argsort(-calibrated_order) == np.argsort(-alpha_true)).all()))
        rank_tau.append(float(scipy.stats.kendalltau(calibrated_order, alpha_true)[0]))
        if settings.get("n_frameworks", 1) > 1:
            runs = draw.runs.sort_values(["task", "language", "backbone", "framework"])
            shape = (len(panel.tasks), len(panel.languages), len(panel.backbones),
                     settings["n_frameworks"])
            detected.append(three_way_anova(runs["score"].to_numpy(float).reshape(shape),
                                            alpha).table["p"].iloc[6] < alpha)
    errors = np.stack(errors)
    return {"scenario": name, "n_tasks": settings.get("n_tasks"),
            "n_languages": settings.get("n_languages"), "n_backbones": settings.get("n_backbones"),
            "n_frameworks": settings.get("n_frameworks"), "noise_sd": settings.get("noise_sd"),
            "task_language_sd": settings.get("task_language_sd"),
            "three_way_sd": settings.get("three_way_sd"), "n_panels": n_panels,
            "bias": float(errors.mean()), "rmse": float(np.sqrt((errors ** 2).mean())),
            "coverage_radius_total": float(np.mean(covered_total)),
            "coverage_radius_residual": float(np.mean(covered_residual)),
            "coverage_band": float(np.mean(covered_band)),
            "band_mean_half_width": float(np.mean(half_widths)),
            "radius_total_mean": float(np.mean(radii)),
            "rank_recovery": float(np.mean(same_order)), "rank_tau_mean": float(np.mean(rank_tau)),
            "three_way_detection": float(np.mean(detected)) if detected else np.nan}
