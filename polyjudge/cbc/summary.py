"""What one CBC fit reports beside beta: sizes, the estimator, both sigmas and radii, R^2 and
the order after calibration (the workflow's ``cbc/summary.json``)."""
from __future__ import annotations

import numpy as np

from ..data.panel import Panel
from . import estimator as cbc

SIGMA_DEFINITIONS = {
    "sigma_total": "population SD (ddof 0) of all task-level scores (the paper's protocol)",
    "sigma_residual": "population SD of the residuals of task + language + backbone + "
                      "language x backbone fitted to the task-level scores",
}
R2_MODELS = {
    "r2_two_way": "run score ~ task + backbone + language + framework + backbone:language",
    "r2_full": "the two-way model + task:language",
}


def cbc_summary(panel: Panel, result: cbc.CBCResult, *, method: str, note: str, n_runs: int,
                r2: tuple[float, float], eps: float) -> dict:
    """The summary of ``result`` fitted on ``panel`` by estimator ``method`` (``note`` says why):
    the radius of the finite-sample proposition at level ``eps`` with the total and the residual
    SD, the tasks a radius of half the largest ``|beta|`` needs, and the run-level R^2 (two-way,
    full) computed where the runs are read."""
    n, k, m = panel.shape
    sigma_total = float(np.nanstd(panel.values))
    sigma_residual = cbc.residual_sd(panel.values)
    max_beta = float(np.abs(result.beta).max())
    radius = lambda sigma: cbc.finite_sample_radius(sigma, n, k, m, eps)
    return {
        "n_tasks": n, "n_languages": k, "n_backbones": m, "n_runs": n_runs,
        "complete": panel.is_complete,
        "estimator": method,
        "estimator_note": note,
        "sigma_total": sigma_total,
        "sigma_residual": sigma_residual,
        "radius_total": radius(sigma_total),
        "radius_residual": radius(sigma_residual),
        "eps": eps,
        "sigma_definitions": dict(SIGMA_DEFINITIONS),
        "max_abs_beta": max_beta,
        "tasks_for_radius_below_half_max_beta": cbc.tasks_for_radius(
            sigma_total, max_beta / 2, k, m, eps),
        "r2_two_way": r2[0],
        "r2_full": r2[1],
        "r2_models": dict(R2_MODELS),
        "same_order_after_cbc": bool((result.rank_cbc == result.rank_cbc[0]).all()),
        "order_after_cbc": [panel.backbones[i] for i in np.argsort(result.rank_cbc[0])],
    }


def outside_score_range(calibrated: np.ndarray, score_range) -> dict | None:
    """How many calibrated task-level scores (``calibrated``, any shape; missing ones left out)
    lie outside the panel's ``score_range`` ``[low, high]``: ``score_range``, ``n_scores``,
    ``n_outside``, ``n_below``, ``n_above``; None without a range.

    A calibrated score is the raw score minus its cell's beta, so a cell with beta > 0 pushes
    scores near the lower bound below it (and beta < 0 near the upper bound above it). They are
    kept as they are, not clipped (clipping would bias the cell means CBC adjusts); this count
    says how many there are."""
    if score_range is None:
        return None
    low, high = (float(x) for x in score_range)
    values = np.asarray(calibrated, dtype=float)
    values = values[np.isfinite(values)]
    below, above = int((values < low).sum()), int((values > high).sum())
    return {"score_range": [low, high], "n_scores": int(values.size),
            "n_outside": below + above, "n_below": below, "n_above": above}
