"""Simulation study of CBC on the synthetic additive-model panels (docs/methods.md 10.5).

For each scenario of a grid (panel sizes, noise, task x language effects, three-way effects), many
panels of the model of :mod:`polyjudge.analyses.synthetic` are drawn and CBC is fitted on each:

* bias and RMSE of ``beta_hat - beta_true`` over all cells and panels;
* coverage of the Gaussian union radius (total-SD and residual-SD sigma) and of the task-bootstrap
  simultaneous band: the share of panels in which *every* cell's true beta lies inside;
* rank recovery: the share of panels where the order after CBC (the column means) equals the
  order of the true backbone effects, and the mean Kendall tau between them;
* the three-way diagnostic's detection rate (share of panels with p < alpha), when there are
  repeats (frameworks);
* apart, in :func:`simulate_rank_coverage`: the coverage of the leaderboard's rank intervals
  (:mod:`polyjudge.analyses.leaderboard`: the marginal percentile intervals and the simultaneous
  rank sets) of the planted ranks, on the same panels.

Everything is stacked over panels, not looped: a block of ``P`` panels is one ``(P, n, k, m, F)``
run array, the band's task bootstraps one ``(P, R, n)`` weight array and its cell means one
batched matrix product, exactly as :mod:`polyjudge.analyses.heldout` stacks its replicates. The
formulas are those of :func:`polyjudge.cbc.band.bootstrap_band`,
:func:`polyjudge.cbc.estimator.residual_sd` and
:func:`polyjudge.analyses.diagnostics.three_way_anova`, applied along a leading panel axis (the
tests check each against them panel by panel). Memory is bounded by the block size.
"""
from __future__ import annotations

import numpy as np
import scipy.special

from ..cbc.bootstrap import pairwise_tau
from ..cbc.estimator import double_center, finite_sample_radius, rank_by_count
from .leaderboard import rank_interval, rank_sets
from .synthetic import COMPONENTS, _check_settings

SCENARIO_COLUMNS = ["scenario", "n_tasks", "n_languages", "n_backbones", "n_frameworks",
                    "noise_sd", "task_language_sd", "three_way_sd", "n_panels", "bias", "rmse",
                    "coverage_radius_total", "coverage_radius_residual", "coverage_band",
                    "band_mean_half_width", "radius_total_mean", "rank_recovery",
                    "rank_tau_mean", "three_way_detection"]
SETTING_COLUMNS = SCENARIO_COLUMNS[1:9]
"""The generator settings and panel count that both tables of the study repeat."""
RANK_COVERAGE_COLUMNS = ["scenario", *SETTING_COLUMNS, "n_replicates", "level", "ranking",
                         "interval", "coverage", "coverage_language", "mean_length"]

BLOCK_SIZE = 100
"""Panels drawn and analysed together. The random stream is a function of (seed, block size):
block ``b`` uses the b-th child of ``SeedSequence(seed)``."""


def draw_panels(seed, n_panels: int, settings: dict) -> dict:
    """``n_panels`` panels of the additive model, stacked: ``runs`` ``(P, n, k, m, F)``, the
    planted ``beta`` ``(P, k, m)`` and ``alpha`` ``(P, m)``.

    ``settings``: the keyword arguments of :func:`polyjudge.analyses.synthetic.simulate_panel`
    (without the seed; missing cells are not supported: the band needs complete panels). ``seed``
    (anything ``SeedSequence`` takes) spawns one stream per model component, as
    :func:`~polyjudge.analyses.synthetic.simulate_panel` does, and every component is drawn for all
    panels at once with a leading panel axis; so with ``n_panels=1`` this is exactly
    ``simulate_panel(seed, **settings)``.
    """
    s = _check_settings({"seed": 0, "n_tasks": 55, "n_languages": 8, "n_backbones": 6,
                         "n_frameworks": 3, "mean": 50.0, "task_sd": 10.0, "backbone_sd": 5.0,
                         "interaction_sd": 8.0, "task_language_sd": 5.0, "three_way_sd": 0.0,
                         "noise_sd": 15.0, "missing_fraction": 0.0, "requirements_per_task": 0,
                         "clip": True, **settings})
    if s["missing_fraction"] > 0:
        raise ValueError("the simulation study needs complete panels (the bootstrap band does): "
                         f"set missing_fraction to 0, got {s['missing_fraction']}")
    sequence = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    streams = dict(zip(COMPONENTS, map(np.random.default_rng, sequence.spawn(len(COMPONENTS)))))
    P = n_panels
    n, k, m, F = (s["n_tasks"], s["n_languages"], s["n_backbones"], s["n_frameworks"])
    mu = streams["mu"].normal(0.0, s["task_sd"], (P, n))
    alpha = streams["alpha"].normal(0.0, s["backbone_sd"], (P, m))
    beta = double_center(streams["beta"].normal(0.0, s["interaction_sd"], (P, k, m)))
    gamma = streams["gamma"].normal(0.0, s["task_language_sd"], (P, n, k))
    runs = streams["noise"].normal(0.0, s["noise_sd"], (P, n, k, m, F))
    runs += s["mean"] + mu[:, :, None, None, None] + alpha[:, None, None, :, None] \
        + beta[:, None, :, :, None] + gamma[:, :, :, None, None]
    if s["three_way_sd"] > 0:
        runs += streams["delta"].normal(0.0, s["three_way_sd"], (P, n, k, m))[..., None]
    if s["requirements_per_task"]:  # Bernoulli verdicts with P(satisfied) = clip(S / 100, 0, 1)
        R = s["requirements_per_task"]
        probability = np.clip(runs / 100.0, 0.0, 1.0)
        draws = streams["verdicts"].random(runs.shape + (R,))
        runs = 100.0 * (draws < probability[..., None]).sum(axis=-1) / R
    elif s["clip"]:
        np.clip(runs, 0.0, 100.0, out=runs)
    return {"runs": runs, "beta": beta, "alpha": alpha}


def task_bootstrap_counts(rng: np.random.Generator, n_panels: int, n_replicates: int,
                          n_tasks: int) -> np.ndarray:
    """``(P, R, n)`` multiplicities of ``R`` task bootstraps for each of ``P`` panels (each row
    sums to ``n``), from one ``rng.integers(0, n, (P, R, n))`` draw."""
    draws = rng.integers(0, n_tasks, size=(n_panels, n_replicates, n_tasks))
    offsets = draws + n_tasks * np.arange(n_panels * n_replicates).reshape(n_panels,
                                                                           n_replicates, 1)
    counts = np.bincount(offsets.ravel(), minlength=n_panels * n_replicates * n_tasks)
    return counts.reshape(n_panels, n_replicates, n_tasks)


def stacked_band(values: np.ndarray, counts: np.ndarray, level: float) -> dict:
    """The bootstrap-t max-|t| band of :func:`polyjudge.cbc.band.bootstrap_band` for a stack
    of complete panels ``values`` ``(P, n, k, m)`` with bootstrap multiplicities ``counts``
    ``(P, R, n)``.

    Returns ``beta`` and ``se`` ``(P, k, m)`` and the ``critical`` value ``(P,)``: the band is
    ``beta +- critical x se``. Replicate ``r``'s cell means are ``w_r @ D / n`` with ``D[t]`` the
    double-centred task matrices (one batched product for all panels and replicates).
    """
    P, n, k, m = values.shape
    per_task = double_center(values).reshape(P, n, k * m)
    beta = per_task.mean(axis=1)
    se = per_task.std(axis=1, ddof=1) / np.sqrt(n)
    weights = counts.astype(float) / n
    boot_beta = weights @ per_task
    boot_var = np.maximum(weights @ per_task ** 2 - boot_beta ** 2, 0.0)
    boot_se = np.sqrt(boot_var / (n - 1))
    deviation = np.abs(boot_beta - beta[:, None, :])
    with np.errstate(divide="ignore", invalid="ignore"):
        t_max = np.where(boot_se > 0, deviation / boot_se, np.inf).max(axis=-1)
    critical = np.quantile(t_max, level, axis=1)
    return {"beta": beta.reshape(P, k, m), "se": se.reshape(P, k, m), "critical": critical}


def stacked_residual_sd(values: np.ndarray) -> np.ndarray:
    """:func:`polyjudge.cbc.estimator.residual_sd` of each complete panel of ``(P, n, k, m)``."""
    cells = values.mean(axis=1, keepdims=True)
    fitted = values.mean(axis=(2, 3), keepdims=True) + cells \
        - cells.mean(axis=(2, 3), keepdims=True)
    return (values - fitted).std(axis=(1, 2, 3))


def stacked_three_way_p(runs: np.ndarray) -> np.ndarray:
    """p-value of the task x language x backbone term of
    :func:`polyjudge.analyses.diagnostics.three_way_anova` for each panel of ``(P, n, k, m, F)``.

    The three-way effect is the cell means centred along every axis and pair of axes,
    ``SS = F sum effect^2`` on ``(n-1)(k-1)(m-1)`` df, tested against the within-cell
    residual on ``n k m (F-1)`` df: ``p = F-distribution survival (scipy.special.fdtrc)``.
    """
    P, n, k, m, F = runs.shape
    cell = runs.mean(axis=-1)
    effect = cell
    for axis in (1, 2, 3):  # centring along each axis in turn leaves the three-way term
        effect = effect - effect.mean(axis=axis, keepdims=True)
    ss = F * (effect ** 2).sum(axis=(1, 2, 3))
    df, df_res = (n - 1) * (k - 1) * (m - 1), n * k * m * (F - 1)
    ss_res = ((runs - cell[..., None]) ** 2).sum(axis=(1, 2, 3, 4))
    return scipy.special.fdtrc(df, df_res, (ss / df) / (ss_res / df_res))


def _analyse_block(panels: dict, counts: np.ndarray, level: float, alpha: float) -> dict:
    """Per-panel results of one block (arrays with a leading panel axis)."""
    runs, truth = panels["runs"], panels["beta"]
    P, n, k, m, F = runs.shape
    values = runs.mean(axis=-1)
    band = stacked_band(values, counts, level)
    error = band["beta"] - truth
    unit_radius = finite_sample_radius(1.0, n, k, m, 1.0 - level)  # radius is linear in sigma
    radius_total = unit_radius * values.std(axis=(1, 2, 3))
    radius_residual = unit_radius * stacked_residual_sd(values)
    half_width = band["critical"][:, None, None] * band["se"]
    cells = (1, 2)
    order = values.mean(axis=(1, 2))  # calibrated order: the column means of the cell means
    same = (np.argsort(-order, axis=-1) == np.argsort(-panels["alpha"], axis=-1)).all(axis=-1)
    result = {
        "error": error,
        "covered_total": (np.abs(error) <= radius_total[:, None, None]).all(axis=cells),
        "covered_residual": (np.abs(error) <= radius_residual[:, None, None]).all(axis=cells),
        "covered_band": (np.abs(truth - band["beta"]) <= half_width).all(axis=cells),
        "half_width": half_width.mean(axis=cells),
        "radius": radius_total,
        "same_order": same,
        "rank_tau": pairwise_tau(np.stack([order, panels["alpha"]], axis=1), 0.0)[:, 0, 1],
    }
    if F > 1:
        result["detected"] = stacked_three_way_p(runs) < alpha
    return result


def _study_blocks(settings: dict, n_panels: int, seed, block_size: int):
    """The panels of a scenario, block by block: ``(panels, block)`` with ``block`` the block's
    ``SeedSequence`` after :func:`draw_panels` spawned its first children (the caller spawns
    the next ones for its bootstraps), so every analysis of the study sees the same panels."""
    if n_panels < 1:
        raise ValueError(f"need at least one panel, got {n_panels}")
    sizes = [min(block_size, n_panels - start) for start in range(0, n_panels, block_size)]
    for size, block in zip(sizes, np.random.SeedSequence(seed).spawn(len(sizes))):
        yield draw_panels(block, size, settings), block  # spawns the block's first children


def _settings_row(name: str, settings: dict, n_panels: int) -> dict:
    """The scenario columns both tables start with."""
    return {"scenario": name, **{key: settings.get(key) for key in SETTING_COLUMNS[:-1]},
            "n_panels": n_panels}


def simulate_scenario(name: str, settings: dict, n_panels: int, seed,
                      band_replicates: int = 500, level: float = 0.95,
                      alpha: float = 0.05, block_size: int = BLOCK_SIZE) -> dict:
    """One row of the study: ``n_panels`` panels drawn with ``settings`` (simulate_panel's
    keyword arguments, without the seed), in blocks of ``block_size`` panels.

    Block ``b`` uses the b-th child of ``SeedSequence(seed)``: its first children draw the
    panels (:func:`draw_panels`), the next one the ``band_replicates`` task bootstraps of each.
    """
    if band_replicates < 100:
        raise ValueError("use at least 100 bootstrap replicates for a band, got "
                         f"{band_replicates}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    parts = []
    for panels, block in _study_blocks(settings, n_panels, seed, block_size):
        size, n = panels["runs"].shape[:2]
        counts = task_bootstrap_counts(np.random.default_rng(block.spawn(1)[0]), size,
                                       band_replicates, n)
        parts.append(_analyse_block(panels, counts, level, alpha))
    per_panel = {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
    errors = per_panel["error"]
    return {**_settings_row(name, settings, n_panels),
            "bias": float(errors.mean()), "rmse": float(np.sqrt((errors ** 2).mean())),
            "coverage_radius_total": float(per_panel["covered_total"].mean()),
            "coverage_radius_residual": float(per_panel["covered_residual"].mean()),
            "coverage_band": float(per_panel["covered_band"].mean()),
            "band_mean_half_width": float(per_panel["half_width"].mean()),
            "radius_total_mean": float(per_panel["radius"].mean()),
            "rank_recovery": float(per_panel["same_order"].mean()),
            "rank_tau_mean": float(per_panel["rank_tau"].mean()),
            "three_way_detection": (float(per_panel["detected"].mean())
                                    if "detected" in per_panel else np.nan)}


# --- rank intervals of the leaderboard ---------------------------------------------------------
def stacked_rank_replicates(values: np.ndarray, counts: np.ndarray) -> dict:
    """The replicates of :func:`polyjudge.analyses.leaderboard.leaderboard` (plain CBC) for a
    stack of complete panels ``values`` ``(P, n, k, m)`` and task bootstraps ``counts``
    ``(P, R, n)``: ``raw`` the ``(P, R, k, m)`` cell means ``counts @ values / n``, ``cbc``
    those minus their double-centred beta."""
    P, n, k, m = values.shape
    means = (counts.astype(float) @ values.reshape(P, n, k * m) / n).reshape(P, -1, k, m)
    return {"raw": means, "cbc": means - double_center(means)}


def planted_ranks(alpha: np.ndarray, beta: np.ndarray) -> dict:
    """True within-language ranks ``(P, k, m)`` of the model's population cell means: raw, of
    ``alpha_b + beta_lb`` (task and task x language effects are shared by a language's
    backbones); after CBC, of ``alpha_b`` in every language (beta's columns sum to 0)."""
    return {"raw": rank_by_count(alpha[:, None, :] + beta),
            "cbc": np.broadcast_to(rank_by_count(alpha)[:, None, :], beta.shape)}


def rank_coverage(low: np.ndarray, high: np.ndarray, truth: np.ndarray) -> dict:
    """How rank intervals ``[low, high]`` ``(..., k, m)`` cover the true ranks ``truth``:
    ``coverage`` the share of intervals holding the true rank, ``coverage_language`` the share
    of languages (rows) where every backbone's does, ``mean_length`` the mean number of ranks
    an interval allows (1: the rank is pinned; m: any rank)."""
    covered = (low <= truth) & (truth <= high)
    return {"coverage": float(covered.mean()),
            "coverage_language": float(covered.all(axis=-1).mean()),
            "mean_length": float((high - low + 1).mean())}


RANK_INTERVALS = ("marginal", "simultaneous")
"""The leaderboard's two kinds of rank interval: per backbone (:func:`rank_interval`) and
simultaneous over a language (:func:`rank_sets`)."""


def simulate_rank_coverage(name: str, settings: dict, n_panels: int, seed,
                           n_replicates: int = 200, level: float = 0.95,
                           block_size: int = BLOCK_SIZE) -> list[dict]:
    """Four rows of :data:`RANK_COVERAGE_COLUMNS` (``ranking`` raw and cbc, each with
    ``interval`` marginal and simultaneous): the leaderboard's rank intervals and rank sets at
    ``level`` from ``n_replicates`` task bootstraps, on the panels that
    :func:`simulate_scenario` draws with the same arguments, against :func:`planted_ranks`.

    Block ``b``'s bootstraps use the child of its ``SeedSequence`` after the band's.
    """
    if n_replicates < 100:
        raise ValueError(f"use at least 100 replicates for rank intervals, got {n_replicates}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    parts = {(ranking, kind): [] for ranking in ("raw", "cbc") for kind in RANK_INTERVALS}
    for panels, block in _study_blocks(settings, n_panels, seed, block_size):
        values = panels["runs"].mean(axis=-1)
        rng = np.random.default_rng(block.spawn(2)[1])  # child 0 is the band's
        counts = task_bootstrap_counts(rng, len(values), n_replicates, values.shape[1])
        truth = planted_ranks(panels["alpha"], panels["beta"])
        means = values.mean(axis=1)
        point = {"raw": means, "cbc": means - double_center(means)}
        for ranking, draws in stacked_rank_replicates(values, counts).items():
            parts[ranking, "marginal"].append((*rank_interval(draws, level, axis=1),
                                               truth[ranking]))
            parts[ranking, "simultaneous"].append((*rank_sets(point[ranking], draws, level),
                                                   truth[ranking]))
    head = {**_settings_row(name, settings, n_panels), "n_replicates": n_replicates,
            "level": level}
    return [{**head, "ranking": ranking, "interval": kind,
             **rank_coverage(*(np.concatenate(arrays) for arrays in zip(*blocks)))}
            for (ranking, kind), blocks in parts.items()]
