"""Ablations of CBC and leave-one-language-out (LOLO) extrapolation.

CBC paper, appendix A (backbone subsets), appendix B.2 (task count, requirement types) and the
limitations of section 8 (LOLO); docs/methods.md section 5. Every analysis
is a held-out evaluation in the sense of section 2: cell means ``M_tr`` from the (weighted)
in-bag tasks fit ``beta = double_center(M_tr)``, and the out-of-bag cell means ``M_ev`` are
scored by the mean Kendall tau-b between language rows, raw (``M_ev``) and calibrated
(``M_ev - beta``). The random streams follow the published protocol of each ablation (see the
function docstrings); with the default seeds they reproduce the published DevAI values.

All functions stack the bootstrap replicates into ``(R, k, m)`` arrays; the only Python loops
are over ablation levels (task counts, subset sizes, languages, requirement groups) and, where
the protocol interleaves two draws per replicate, over the cheap random draws themselves.
"""
from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from ..cbc.bootstrap import (
    TaskBootstrap,
    mean_pairwise_tau,
    pairwise_tau,
    task_bootstrap,
    weighted_cell_means,
)
from ..cbc.estimator import double_center, finite_sample_radius
from ..data import io
from ..data.errors import InputError
from ..data.panel import Panel, nanmean

DEFAULT_REQUIREMENT_GROUPS = {"operational": ("Data Loading", "Training"),
                              "semantic": ("Model Construction", "Evaluation Metrics")}


def _complete_values(panel: Panel, what: str) -> np.ndarray:
    """The panel's scores, after checking that every language x backbone cell has a score."""
    if not np.isfinite(panel.cell_means()).all():
        raise ValueError(f"{what} needs every language x backbone cell to have at least one score")
    return panel.values


def _raw_and_cbc_tau(m_tr: np.ndarray, m_ev: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-replicate mean pairwise tau of ``M_ev`` (raw) and ``M_ev - beta(M_tr)`` (CBC)."""
    return mean_pairwise_tau(m_ev), mean_pairwise_tau(m_ev - double_center(m_tr))


def _summary(name: str, taus: np.ndarray) -> dict:
    """``name`` (mean over replicates), ``name_low`` / ``name_high`` (2.5 / 97.5 percentiles);
    undefined (NaN) replicates are skipped."""
    low, high = np.nanpercentile(taus, [2.5, 97.5])
    return {name: float(np.nanmean(taus)), f"{name}_low": float(low), f"{name}_high": float(high)}


# --- task count --------------------------------------------------------------------------------

def _subset_bootstrap(n_tasks: int, subset_size: int, n_replicates: int,
                      rng: np.random.Generator) -> TaskBootstrap:
    """Bootstraps within random task subsets, as a :class:`TaskBootstrap` over all tasks.

    Stream (protocol), per replicate: ``rng.choice(n_tasks, subset_size, replace=False)`` picks
    the subset, then ``rng.choice(subset_size, subset_size, replace=True)`` bootstraps within
    it. ``counts`` are the in-bag multiplicities (0 outside the subset); ``oob`` marks the
    subset's tasks that were never drawn (tasks outside the subset are neither).
    """
    subsets = np.empty((n_replicates, subset_size), dtype=np.int64)
    draws = np.empty((n_replicates, subset_size), dtype=np.int64)
    for r in range(n_replicates):  # the protocol interleaves both draws in one stream
        subsets[r] = rng.choice(n_tasks, subset_size, replace=False)
        draws[r] = subsets[r, rng.choice(subset_size, subset_size, replace=True)]
    offsets = n_tasks * np.arange(n_replicates)[:, None]
    counts = np.bincount((draws + offsets).ravel(), minlength=n_replicates * n_tasks)
    counts = counts.reshape(n_replicates, n_tasks)
    member = np.zeros((n_replicates, n_tasks), dtype=bool)
    np.put_along_axis(member, subsets, True, axis=1)
    return TaskBootstrap(counts=counts, oob=member & (counts == 0))


N_VALUES = "`ablations.task_count.n_values`"  # the setting, in messages (it is not per panel)


def panel_task_counts(n_values, n_tasks: int) -> tuple[list[int], str | None]:
    """The task counts of :data:`N_VALUES` a panel of ``n_tasks`` tasks can draw (at most its
    tasks) and what to say of the others (None: every one kept); when none is kept it stops,
    naming the setting and task counts that fit (the defaults are sized for DevAI's 55 tasks)."""
    kept = [int(n) for n in n_values if n <= n_tasks]
    skipped = sorted({int(n) for n in n_values} - set(kept))
    if not skipped:
        return kept, None
    if n_tasks < 3:  # the schema's smallest task count
        raise InputError(f"{N_VALUES} {list(n_values)}", f"the panel has only {n_tasks} task(s)",
                         "at least 3 tasks for the task-count ablation: drop 'task_count' from "
                         "the panel's `analyses`")
    fit = sorted({max(3, round(n_tasks * share)) for share in (0.25, 0.5, 0.75, 1.0)})
    fix = (f"to draw the curve on this panel, set {N_VALUES} in your config to task counts "
           f"from 3 to {n_tasks}, e.g. ablations: {{task_count: {{n_values: {fit}}}}}")
    if not kept:
        raise InputError(f"{N_VALUES} {list(n_values)}", f"every value is more than the "
                         f"panel's {n_tasks} tasks", fix)
    return kept, (f"the panel has only {n_tasks} tasks: the n values {skipped} of {N_VALUES} "
                  f"{list(n_values)} are more than that and are skipped (the curve has n = "
                  f"{kept}); {fix}")


def task_count_ablation(panel: Panel, n_values=(10, 20, 30, 40, 55), n_replicates: int = 100,
                        seed: int = 107, beta_true=None, eps: float = 0.05) -> pd.DataFrame:
    """How held-out tau and the error of beta depend on the number of tasks ``n``.

    For each ``n`` (in the given order, one continuing stream ``default_rng(seed)``; see
    :func:`_subset_bootstrap` for the draws of a replicate): pick ``n`` tasks without
    replacement, bootstrap ``n`` within them, fit ``beta`` on the weighted in-bag cell means and
    score the subset's OOB cell means. Error of a replicate: ``mean_{l,b} |beta - beta_full|``
    against the full-panel fit (and against ``beta_true`` if given). The radius is the
    finite-sample radius ``sigma sqrt(2 (1-1/m)(1-1/k) ln(2mk/eps) / n)`` with sigma the total
    SD (ddof 0) of the panel's scores (docs/methods.md section 1). Both shrink like ``1/sqrt(n)``.

    ``beta_true``: the planted interaction of a synthetic panel, a ``(k, m)`` array in the
    panel's order or a languages x backbones DataFrame (aligned by label).

    Returns one row per ``n``: n_tasks, tau_mean, tau_sd, raw_tau_mean, error_mean, error_sd,
    radius[, error_true_mean, error_true_sd]. Means skip undefined (NaN) replicates; SDs are
    over replicates with ddof 0. Published DevAI (seed 107): tau .759/.838/.853/.891/.906,
    error 2.007/1.433/1.108/0.910/0.668 (reproduced to the printed digits).
    """
    values = _complete_values(panel, "the task-count ablation")
    n_all, k, m = values.shape
    n_values = [int(n) for n in n_values]
    if not n_values or min(n_values) < 2 or max(n_values) > n_all:
        raise ValueError(f"task counts must lie in [2, {n_all}] (the panel's tasks), "
                         f"got {n_values}")
    if n_replicates < 1:
        raise ValueError(f"need at least 1 replicate, got {n_replicates}")
    beta_full = double_center(panel.cell_means())
    truth = None if beta_true is None else _aligned_beta(beta_true, panel)
    sigma = float(np.nanstd(values))
    rng = np.random.default_rng(seed)
    rows = []
    for n in n_values:
        boot = _subset_bootstrap(n_all, n, n_replicates, rng)
        m_tr = weighted_cell_means(values, boot.counts)
        raw, cbc = _raw_and_cbc_tau(m_tr, weighted_cell_means(values, boot.oob))
        beta = double_center(m_tr)
        error = np.abs(beta - beta_full).mean(axis=(-2, -1))
        row = {"n_tasks": n, "tau_mean": np.nanmean(cbc), "tau_sd": np.nanstd(cbc),
               "raw_tau_mean": np.nanmean(raw), "error_mean": np.nanmean(error),
               "error_sd": np.nanstd(error), "radius": finite_sample_radius(sigma, n, k, m, eps)}
        if truth is not None:
            error_true = np.abs(beta - truth).mean(axis=(-2, -1))
            row.update(error_true_mean=np.nanmean(error_true),
                       error_true_sd=np.nanstd(error_true))
        rows.append(row)
    return pd.DataFrame(rows)


def _aligned_beta(beta_true, panel: Panel) -> np.ndarray:
    """``beta_true`` as a ``(k, m)`` array in the panel's language x backbone order."""
    if isinstance(beta_true, pd.DataFrame):
        missing = (set(panel.languages) - set(beta_true.index)) | \
            (set(panel.backbones) - set(beta_true.columns))
        if missing:
            raise ValueError(f"beta_true has no row/column for {sorted(missing)}")
        beta_true = beta_true.loc[list(panel.languages), list(panel.backbones)]
    beta_true = np.asarray(beta_true, dtype=float)
    if beta_true.shape != panel.shape[1:]:
        raise ValueError(f"beta_true has shape {beta_true.shape}, the panel has "
                         f"{panel.shape[1:]} languages x backbones")
    return beta_true


# --- backbone subsets --------------------------------------------------------------------------

def backbone_subset_ablation(panel: Panel, sizes=None, n_replicates: int = 100,
                             seed_base: int = 7) -> pd.DataFrame:
    """Held-out CBC tau on every subset of backbones of each size.

    For each size ``s`` (default every size from 2 to m) one bootstrap of the tasks,
    ``task_bootstrap(n, n_replicates, default_rng(seed_base + s))``, is shared by all
    ``C(m, s)`` subsets of that size (:func:`itertools.combinations` in panel order); a subset's
    score is its mean CBC tau over replicates, i.e. the held-out evaluation of the panel
    restricted to those backbones. Protocol: a fresh stream per size (not one stream continued
    over the subsets) and the SD across subsets with ddof 0; this reproduces the published
    DevAI values mean .901/.907/.900/.898/.911, SD .206/.105/.075/.044/0 exactly.

    Returns a long frame with ``level`` "subset" (one row per subset) then "size" (one row per
    size): size, backbones (the subset's backbones joined by "+"; empty for size rows),
    n_subsets, tau_mean, tau_sd, raw_tau_mean. Subset rows: means over replicates and tau_sd
    the SD over replicates; size rows: mean and SD (ddof 0) of the subset means.
    """
    values = _complete_values(panel, "the backbone-subset ablation")
    n, _, m = values.shape
    sizes = list(range(2, m + 1)) if sizes is None else [int(s) for s in sizes]
    if not sizes or min(sizes) < 2 or max(sizes) > m:
        raise ValueError(f"subset sizes must lie in [2, {m}] (the panel's backbones), got {sizes}")
    subset_rows, size_rows = [], []
    for size in sizes:
        boot = task_bootstrap(n, n_replicates, np.random.default_rng(seed_base + size))
        subsets = np.array(list(combinations(range(m), size)))
        # (R, k, S, s) -> (S, R, k, s): every subset's replicate stack at once
        m_tr, m_ev = (np.moveaxis(weighted_cell_means(values, w)[..., subsets], -2, 0)
                      for w in (boot.counts, boot.oob))
        raw, cbc = _raw_and_cbc_tau(m_tr, m_ev)
        tau = np.nanmean(cbc, axis=1)
        raw_tau = np.nanmean(raw, axis=1)
        for subset, t, sd, r in zip(subsets, tau, np.nanstd(cbc, axis=1), raw_tau):
            subset_rows.append({"level": "subset", "size": size, "n_subsets": 1,
                                "backbones": "+".join(panel.backbones[i] for i in subset),
                                "tau_mean": t, "tau_sd": sd, "raw_tau_mean": r})
        size_rows.append({"level": "size", "size": size, "n_subsets": len(subsets),
                          "backbones": "", "tau_mean": tau.mean(), "tau_sd": tau.std(),
                          "raw_tau_mean": raw_tau.mean()})
    columns = ["level", "size", "backbones", "n_subsets", "tau_mean", "tau_sd", "raw_tau_mean"]
    return pd.DataFrame(subset_rows + size_rows, columns=columns)


# --- requirement type --------------------------------------------------------------------------

def requirement_type_ablation(requirements: pd.DataFrame, requirement_types: pd.DataFrame, *,
                              groups=None, languages=None, backbones=None,
                              n_replicates: int = 200, seed: int = 7) -> pd.DataFrame:
    """Raw and CBC held-out tau on run scores recomputed from one group of requirement types.

    ``requirements``: the standard requirement table (task, language, backbone, framework,
    requirement_id, category, satisfied); ``requirement_types``: task, requirement_id,
    requirement_type (one row per requirement). ``groups`` maps a group name to its
    requirement types (default :data:`DEFAULT_REQUIREMENT_GROUPS`: operational = Data Loading +
    Training, semantic = Model Construction + Evaluation Metrics); a row "all" uses every
    requirement. A group's run score is ``100 x satisfied / requirements`` over the group's
    requirements of the task (tasks without any drop out), averaged over frameworks into the
    panel (``languages`` / ``backbones`` give the axis order, as in :func:`io.build_panel`).
    Held-out tau: the Table 2 stream (``task_bootstrap`` with ``default_rng(seed)`` and the
    interleaved row permutations), fresh for every group.

    Returns one row per group (all first): group, requirement_types ("+"-joined), n_tasks,
    n_requirements, raw_tau, raw_tau_low, raw_tau_high, cbc_tau, cbc_tau_low, cbc_tau_high
    (means and 2.5 / 97.5 percentiles over replicates). DevAI (seed 7): operational .771 ->
    .787, semantic .734 -> .829; published .770 -> .789 and .737 -> .840, whose exact stream
    is not known (docs/methods.md section 5).
    """
    groups = dict(DEFAULT_REQUIREMENT_GROUPS if groups is None else groups)
    typed = _typed_requirements(requirements, requirement_types)
    known = set(typed["requirement_type"])
    for name, types in groups.items():
        unknown = sorted(set(types) - known)
        if name == "all" or not types or unknown:
            raise ValueError(f"requirement group {name!r}: needs a name other than 'all' and "
                             f"types among {sorted(known)}; unknown {unknown}")
    rows = []
    for name, types in [("all", sorted(known))] + list(groups.items()):
        subset = typed[typed["requirement_type"].isin(types)]
        source = f"requirement group {name!r}"
        panel = io.build_panel(io.runs_from_requirements(subset, source), source,
                               languages, backbones)
        _, k, m = panel.shape
        boot = task_bootstrap(panel.shape[0], n_replicates, np.random.default_rng(seed),
                              row_permutations=(k, m))
        raw, cbc = _raw_and_cbc_tau(weighted_cell_means(panel.values, boot.counts),
                                    weighted_cell_means(panel.values, boot.oob))
        rows.append({"group": name, "requirement_types": "+".join(types),
                     "n_tasks": panel.shape[0],
                     "n_requirements": len(subset[["task", "requirement_id"]].drop_duplicates()),
                     **_summary("raw_tau", raw), **_summary("cbc_tau", cbc)})
    return pd.DataFrame(rows)


def _typed_requirements(requirements: pd.DataFrame, types: pd.DataFrame) -> pd.DataFrame:
    """The requirement table with each verdict's requirement_type (every requirement typed)."""
    needed = ["task", "requirement_id", "requirement_type"]
    absent = [c for c in needed if c not in types.columns]
    if absent:
        raise ValueError(f"requirement types: missing column(s) {absent}; expected {needed}")
    absent = [c for c in io.REQUIREMENT_COLUMNS if c not in requirements.columns]
    if absent:
        raise ValueError(f"requirement table: missing column(s) {absent}")
    keys = ["task", "requirement_id"]
    types = types[needed].astype({"task": str, "requirement_id": str})
    if types.duplicated(keys).any():
        raise ValueError("requirement types: each (task, requirement_id) must appear once")
    typed = requirements.astype({"task": str, "requirement_id": str}).merge(
        types, on=keys, how="left")
    untyped = typed.loc[typed["requirement_type"].isna(), keys].drop_duplicates()
    if len(untyped):
        raise ValueError(f"{len(untyped)} requirement(s) have no requirement_type, e.g. "
                         f"{untyped.head(3).to_dict('records')}")
    return typed


# --- leave one language out --------------------------------------------------------------------

def lolo(panel: Panel, n_replicates: int = 1000, seed: int = 207) -> pd.DataFrame:
    """Leave-one-language-out: calibrate a language the calibrator never saw.

    For each held-out language ``h`` (in panel order; one continuing stream
    ``default_rng(seed)``, a ``task_bootstrap`` of ``n_replicates`` per language in turn):
    ``beta`` is the double-centring of the in-bag cell means of the other ``k - 1`` languages,
    and row ``h`` is filled either with 0 (zero-shot) or with the mean of the retained rows
    (mean imputation: the same, because the retained rows' columns sum to 0; the float noise of
    that mean can only break exact ties in row ``h``, which moves DevAI's taus by < 2e-4). The
    OOB matrix is
    calibrated with it and a replicate's score is the mean tau-b between row ``h`` and each
    retained row (NaN pairs skipped); raw uses the uncalibrated OOB matrix.

    Returns one row per language and an "overall" row (the mean over languages; its interval
    columns are NaN): language, raw_tau, cbc_tau, cbc_imputed_tau, each with _low / _high
    (2.5 / 97.5 percentiles over replicates). Published DevAI overall raw 0.649 -> 0.740,
    Arabic 0.750 -> 0.898, Spanish 0.411 -> 0.504 (reproduced to the printed digits; a fresh
    seed-207 stream per language does not reproduce them).
    """
    values = _complete_values(panel, "LOLO")
    n, k, _ = values.shape
    if k < 3:
        raise ValueError(f"LOLO needs at least 3 languages (2 retained), got {k}")
    rng = np.random.default_rng(seed)
    rows = []
    for h, language in enumerate(panel.languages):
        boot = task_bootstrap(n, n_replicates, rng)
        m_tr = weighted_cell_means(values, boot.counts)
        m_ev = weighted_cell_means(values, boot.oob)
        kept = np.delete(np.arange(k), h)
        beta_kept = double_center(m_tr[:, kept])
        zero_shot = np.zeros_like(m_tr)
        zero_shot[:, kept] = beta_kept
        imputed = zero_shot.copy()
        imputed[:, h] = beta_kept.mean(axis=-2)
        row = {"language": language}
        for name, matrix in (("raw_tau", m_ev), ("cbc_tau", m_ev - zero_shot),
                             ("cbc_imputed_tau", m_ev - imputed)):
            row.update(_summary(name, nanmean(pairwise_tau(matrix)[:, h, kept], axis=-1)))
        rows.append(row)
    frame = pd.DataFrame(rows)
    overall = {c: np.nan for c in frame.columns}
    overall.update(language="overall", **frame[["raw_tau", "cbc_tau", "cbc_imputed_tau"]].mean())
    return pd.concat([frame, pd.DataFrame([overall])], ignore_index=True)
