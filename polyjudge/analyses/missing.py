"""The CBC interaction on incomplete panels, and parse failures treated as missing.

CBC (paper, section 3; docs/methods.md section 1) double-centres the cell means of a complete,
balanced panel. With missing task x language x backbone cells, cell means over different task
sets mix task difficulty into beta. Three estimators of ``beta[l, b]`` from ``T[t, l, b]`` with
NaN for missing cells (docs/methods.md 10.1):

* ``available_means``: double-centre the means of the observed cells (``M[l, b]`` over the tasks
  observed in that cell).
* ``task_adjusted``: subtract each task's mean over its observed cells first, then available
  means (the two simple estimators of the authors' later revision).
* ``least_squares``: least squares on the observed scores with task x backbone effects and
  language x backbone cells, ``T[t,l,b] = a(t,b) + c(l,b) [+ g(t,l)] + e``, optionally with
  task x language effects ``g`` as fixed effects (``"fixed"``) or shrunk as random effects
  (``"ridge"``: penalty ``lambda sum g^2``, ``lambda = sigma_e^2 / sigma_g^2``). ``beta`` is the
  double-centred ``c`` (double-centring removes exactly the shifts ``c`` shares with ``a`` and
  ``g``). On a complete panel all variants equal plain double-centring of the cell means.

Default for an incomplete panel: ``least_squares`` without task x language effects. On devai
(deletion experiment below) it has the lowest error; task x language effects only add variance
there (their ANOVA variance component is estimated at zero, so the random-effects version
collapses to plain least squares). :func:`estimate_beta` always records the estimator it used.

Every estimator broadcasts over leading axes: ``values`` is ``(..., n, k, m)``, so the deletion
experiment fits all replicates as one stack.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..cbc.bootstrap import MEMORY_BUDGET
from ..cbc.estimator import double_center, rank_within_language
from ..data import io
from ..data.errors import InputError
from ..data.panel import nanmean

METHODS = ("plain", "available_means", "task_adjusted", "least_squares", "least_squares_tl_fixed",
           "least_squares_tl_ridge")
DEFAULT_INCOMPLETE_METHOD = "least_squares"
DELETION_ARRAYS = 16
"""Panel-sized float64 working arrays per replicate of the deletion experiment (the draws,
their order, the panel with deletions and the least-squares fit's arrays), for its blocks."""
_LS_VARIANTS = {"least_squares": False, "least_squares_tl_fixed": "fixed",
                "least_squares_tl_ridge": "ridge"}


def _check_values(values) -> np.ndarray:
    """A ``(..., n, k, m)`` float array with NaN for missing and every (l, b) cell observed."""
    values = np.asarray(values, dtype=float)
    if values.ndim < 3:
        raise ValueError("values must be (..., tasks, languages, backbones), got shape "
                         f"{values.shape}")
    if np.isinf(values).any():
        raise ValueError("values contain +-inf; missing cells must be NaN")
    empty = ~np.isfinite(values).any(axis=-3)
    if empty.any():
        cells = sorted({(int(l), int(b)) for l, b in zip(*np.nonzero(empty)[-2:])})
        raise ValueError(f"language x backbone cell(s) (language, backbone index) {cells[:5]} "
                         "have no observed task; beta is not identified there (drop that "
                         "language or backbone)")
    return values


def available_cell_means(values: np.ndarray) -> np.ndarray:
    """``M[l, b]``: the mean of the observed ``T[., l, b]``."""
    return nanmean(_check_values(values), axis=-3)


def task_adjusted_cell_means(values: np.ndarray) -> np.ndarray:
    """``M'[l, b] = mean_t (T[t,l,b] - mean_{observed l,b} T[t,.,.])``."""
    values = _check_values(values)
    return nanmean(values - nanmean(values, axis=(-2, -1), keepdims=True), axis=-3)


def available_means_beta(values: np.ndarray) -> np.ndarray:
    """``beta = DC(M)`` with :func:`available_cell_means`."""
    return double_center(available_cell_means(values))


def task_adjusted_beta(values: np.ndarray) -> np.ndarray:
    """``beta = DC(M')`` with :func:`task_adjusted_cell_means`."""
    return double_center(task_adjusted_cell_means(values))


@dataclass(frozen=True)
class LeastSquaresFit:
    """The least-squares fit of :func:`least_squares_fit`.

    ``beta (..., k, m)``; ``cell_means (..., k, m)``: the means over tasks of the completed panel
    (observed scores, fitted values in the missing cells), whose double-centring is exactly
    ``beta``; ``ridge_lambda`` (``(...)`` array: 0 for fixed task x language effects, inf when
    they are left out); ``n_iterations`` of backfitting.
    """

    beta: np.ndarray
    cell_means: np.ndarray
    ridge_lambda: np.ndarray
    n_iterations: int


def _backfit(y, w, lam, tol, max_iter):
    """Backfitting (block Gauss-Seidel) of ``a(t,b) + c(l,b) + g(t,l)`` on observed ``y``.

    ``w`` is the 0/1 observation mask; ``lam`` the ridge penalty of ``g`` (inf: no ``g``).
    Each block update is the exact least-squares solution given the others, so the iteration
    converges to the (penalised) least-squares fit; on a complete panel it is exact after one
    sweep. Each panel of a stack stops when its ``max |change of beta| < tol`` (its result is
    kept from that sweep on), so a panel's fit does not depend on the others in its stack.
    """
    n_tb = w.sum(axis=-2, keepdims=True)
    n_lb = w.sum(axis=-3, keepdims=True)
    n_tl = w.sum(axis=-1, keepdims=True)
    a = np.zeros(n_tb.shape)
    c = np.zeros(n_lb.shape)
    g = np.zeros(n_tl.shape)
    beta = double_center(c[..., 0, :, :])
    done = np.zeros(y.shape[:-3], dtype=bool)
    fit_beta, fitted = np.empty(beta.shape), np.empty(y.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        for iteration in range(1, max_iter + 1):
            a = (w * (y - c - g)).sum(axis=-2, keepdims=True) / np.maximum(n_tb, 1)
            c = (w * (y - a - g)).sum(axis=-3, keepdims=True) / n_lb
            denominator = n_tl + lam
            g = np.where(denominator > 0, (w * (y - a - c)).sum(axis=-1, keepdims=True)
                         / np.where(denominator > 0, denominator, 1.0), 0.0)
            new_beta = double_center(c[..., 0, :, :])
            change = np.abs(new_beta - beta).max(axis=(-2, -1))
            beta = new_beta
            now = (change < tol) & ~done
            if now.any():
                fit_beta[now], fitted[now] = beta[now], np.broadcast_to(a + c + g, y.shape)[now]
                done |= now
            if done.all():
                return fit_beta, fitted, iteration
    raise RuntimeError(f"least squares did not converge in {max_iter} sweeps (last change "
                       f"{change.max():.2e})")


def _ridge_lambda(y, w, tol, max_iter) -> np.ndarray:
    """``lambda = sigma_e^2 / sigma_g^2`` by the ANOVA (Henderson III) method of moments.

    ``sigma_e^2 = RSS_fixed / (N - p_fixed)``; ``MS_g = (RSS_plain - RSS_fixed) / (p_fixed -
    p_plain)``; ``sigma_g^2 = (MS_g - sigma_e^2) / (N / #observed (t, l))``; ranks
    ``p_plain = #(t, b) + k m - m`` and ``p_fixed = p_plain + #(t, l) - #tasks - k + 1`` assume
    the observed cells connect the design (generic for scattered missingness). Exact ANOVA
    estimator on a complete panel. ``sigma_g^2 <= 0`` gives ``lambda = inf`` (no g).
    """
    axes = (-3, -2, -1)
    rss = {}
    for name, lam in (("plain", np.inf), ("fixed", 0.0)):
        fitted = _backfit(y, w, lam, tol, max_iter)[1]
        rss[name] = (w * (y - fitted) ** 2).sum(axis=axes)
    k, m = y.shape[-2:]
    n_obs = w.sum(axis=axes)
    n_tasks = (w.sum(axis=(-2, -1)) > 0).sum(axis=-1)
    n_tl = (w.sum(axis=-1) > 0).sum(axis=(-2, -1))
    p_plain = (w.sum(axis=-2) > 0).sum(axis=(-2, -1)) + k * m - m
    p_fixed = p_plain + n_tl - n_tasks - k + 1
    if np.any(n_obs - p_fixed <= 0):
        raise ValueError("too few observed cells to estimate the task x language variance")
    sigma_e2 = rss["fixed"] / (n_obs - p_fixed)
    ms_g = (rss["plain"] - rss["fixed"]) / (p_fixed - p_plain)
    sigma_g2 = (ms_g - sigma_e2) / (n_obs / n_tl)
    with np.errstate(divide="ignore"):
        return np.where(sigma_g2 > 0, sigma_e2 / np.where(sigma_g2 > 0, sigma_g2, 1.0), np.inf)


def least_squares_fit(values: np.ndarray, task_language=False, ridge_lambda: float | None = None,
                      tol: float = 1e-10, max_iter: int = 10_000) -> LeastSquaresFit:
    """Least-squares interaction ``beta = DC(c)`` of ``T = a(t,b) + c(l,b) [+ g(t,l)] + e``.

    Fitted on the observed cells only. ``task_language``: False (no ``g``), ``"fixed"`` (fixed
    effects) or ``"ridge"`` (``g`` shrunk with penalty ``ridge_lambda``; None estimates
    ``lambda = sigma_e^2 / sigma_g^2`` per panel by the ANOVA method of moments, the
    random-effects BLUP). ``tol`` is the convergence tolerance on beta in score units.
    Identical to plain double-centring on a complete panel (docs/methods.md 10.1).
    """
    values = _check_values(values)
    if task_language not in (False, "fixed", "ridge"):
        raise ValueError(f"task_language must be False, 'fixed' or 'ridge', got {task_language!r}")
    if ridge_lambda is not None and (task_language != "ridge" or not ridge_lambda >= 0):
        raise ValueError("ridge_lambda (>= 0) is only used with task_language='ridge'")
    observed = np.isfinite(values)
    y = np.where(observed, values, 0.0)
    w = observed.astype(float)
    batch = values.shape[:-3]
    if task_language is False:
        lam = np.full(batch, np.inf)
    elif task_language == "fixed":
        lam = np.zeros(batch)
    elif ridge_lambda is None:
        lam = _ridge_lambda(y, w, tol, max_iter)
    else:
        lam = np.full(batch, float(ridge_lambda))
    beta, fitted, iterations = _backfit(y, w, lam[..., None, None, None], tol, max_iter)
    cell_means = np.where(observed, values, fitted).mean(axis=-3)
    return LeastSquaresFit(beta=beta, cell_means=cell_means, ridge_lambda=lam,
                           n_iterations=iterations)


def least_squares_beta(values: np.ndarray, task_language=False, ridge_lambda: float | None = None,
                       tol: float = 1e-10, max_iter: int = 10_000) -> np.ndarray:
    """``beta`` of :func:`least_squares_fit` (same arguments)."""
    return least_squares_fit(values, task_language, ridge_lambda, tol, max_iter).beta


@dataclass(frozen=True)
class InteractionEstimate:
    """``beta`` with the estimator that produced it.

    ``cell_means``: the matrix whose double-centring is ``beta`` (plain or available cell means,
    task-adjusted means, or the least-squares completed means); ``method`` (one of
    :data:`METHODS`); ``n_missing`` task x language x backbone cells; ``note`` says in words which
    estimator was used and why.
    """

    beta: np.ndarray
    cell_means: np.ndarray
    method: str
    n_missing: int
    note: str


def estimate_beta(values: np.ndarray, method: str | None = None) -> InteractionEstimate:
    """The interaction of a possibly incomplete ``(n, k, m)`` panel by the chosen estimator.

    ``method=None`` chooses: ``"plain"`` (double-centring of the cell means) for a complete panel
    and :data:`DEFAULT_INCOMPLETE_METHOD` (``"least_squares"``) for an incomplete one; the
    choice is recorded in the result. ``"plain"`` refuses an incomplete panel.
    """
    values = _check_values(values)
    if values.ndim != 3:
        raise ValueError(f"estimate_beta takes one (n, k, m) panel, got shape {values.shape}")
    n_missing = int((~np.isfinite(values)).sum())
    chosen = method or ("plain" if n_missing == 0 else DEFAULT_INCOMPLETE_METHOD)
    if chosen not in METHODS:
        raise ValueError(f"unknown beta estimator {chosen!r}; choose one of {METHODS}")
    if chosen == "plain" and n_missing:
        raise ValueError(f"plain double-centring needs a complete panel ({n_missing} cells are "
                         f"missing); use one of {METHODS[1:]}")
    means = _cell_means(values, chosen)
    how = "chosen by the panel setting" if method else (
        "default for a complete panel" if n_missing == 0 else "default for an incomplete panel")
    note = f"beta by {chosen} ({how}); {n_missing} of {values.size} task x language x backbone " \
           "cells missing"
    return InteractionEstimate(beta=double_center(means), cell_means=means, method=chosen,
                               n_missing=n_missing, note=note)


def _cell_means(values: np.ndarray, method: str) -> np.ndarray:
    """The ``(..., k, m)`` matrix whose double-centring is ``method``'s beta (vectorised)."""
    if method in ("plain", "available_means"):
        return available_cell_means(values)
    if method == "task_adjusted":
        return task_adjusted_cell_means(values)
    if method in _LS_VARIANTS:
        return least_squares_fit(values, task_language=_LS_VARIANTS[method]).cell_means
    raise ValueError(f"unknown beta estimator {method!r}; choose one of {METHODS}")


def _batch_beta(values: np.ndarray, method: str) -> np.ndarray:
    """``beta`` of a ``(R, n, k, m)`` stack by one estimator (vectorised)."""
    if method == "plain":
        raise ValueError(f"the deletion experiment needs an estimator for incomplete panels: "
                         f"one of {METHODS[1:]}")
    return double_center(_cell_means(values, method))


def deletion_experiment(values: np.ndarray, rates=(0.05, 0.10), n_replicates: int = 200,
                        seed: int = 0,
                        methods=("available_means", "task_adjusted", "least_squares"),
                        block_size: int | None = None) -> pd.DataFrame:
    """MAE of beta after deleting cells at random, against the full-panel beta.

    For each rate, ``n_replicates`` times delete ``round(rate x n k m)`` task x language x
    backbone cells uniformly without replacement (``np.random.default_rng(seed)``, rates in
    order); every method sees the same deletions. MAE = mean over the ``k m`` cells of
    ``|beta_deleted - DC(M_full)|``. Columns: rate, method, n_deleted, mae_mean, mae_sd (ddof 1
    over replicates), n_replicates. devai published (simple estimators): available
    0.34 / 0.51, task-adjusted 0.23 / 0.33 at 5% / 10%.

    Replicates are processed in blocks of ``block_size`` (default: as many as fit
    :data:`polyjudge.cbc.bootstrap.MEMORY_BUDGET` at :data:`DELETION_ARRAYS` panel-sized arrays
    each), drawn in order from the one stream, so memory does not grow with ``n_replicates``
    and the result does not depend on the block size.
    """
    values = np.asarray(values, dtype=float)
    if values.ndim != 3 or not np.isfinite(values).all():
        raise ValueError("the deletion experiment starts from one complete (n, k, m) panel")
    if n_replicates < 2:
        raise ValueError(f"n_replicates must be at least 2, got {n_replicates}")
    full = double_center(values.mean(axis=0))
    rng = np.random.default_rng(seed)
    size = values.size
    block_size = block_size or max(1, MEMORY_BUDGET // (8 * DELETION_ARRAYS * size))
    rows = []
    for rate in rates:
        if not 0 < rate < 1:
            raise ValueError(f"deletion rates must be in (0, 1), got {rate}")
        n_deleted = round(rate * size)
        mae = {method: [] for method in methods}
        for start in range(0, n_replicates, block_size):
            block = min(block_size, n_replicates - start)
            deleted = np.argsort(rng.random((block, size)), axis=1)[:, :n_deleted]
            stack = np.repeat(values.reshape(1, -1), block, axis=0)
            np.put_along_axis(stack, deleted, np.nan, axis=1)
            stack = stack.reshape(block, *values.shape)
            for method in methods:
                mae[method].append(np.abs(_batch_beta(stack, method) - full).mean(axis=(-2, -1)))
        for method in methods:
            errors = np.concatenate(mae[method])
            rows.append(dict(rate=rate, method=method, n_deleted=n_deleted,
                             mae_mean=errors.mean(), mae_sd=errors.std(ddof=1),
                             n_replicates=n_replicates))
    return pd.DataFrame(rows)


# --- parse failures as missing (docs/methods.md 10.2) ----------------------------------------

def runs_treating_empty_as_missing(requirements: pd.DataFrame, source="requirements",
                                   empty_status: str = "empty") -> pd.DataFrame:
    """Run scores over the answered requirements only (empty responses are missing, not 0).

    ``score = 100 x satisfied / answered`` where answered = ``response_status != empty_status``;
    a run with no answered requirement is dropped (its task x language x backbone cell is
    missing if every framework drops). Columns: task, language, backbone, framework,
    n_requirements, n_answered, n_satisfied, score.
    """
    if "response_status" not in requirements.columns:
        raise InputError(source, "no column 'response_status'",
                            "a response status per requirement verdict to tell empty responses")
    io.runs_from_requirements(requirements, source)  # validates the whole table
    answered = requirements[requirements["response_status"].astype(str) != empty_status]
    runs = (io.runs_from_requirements(answered, source)
            .rename(columns={"n_requirements": "n_answered"}))
    totals = requirements.groupby(io.RUN_KEYS, sort=False).size().rename("n_requirements")
    runs = runs.merge(totals.reset_index(), on=io.RUN_KEYS, how="left")
    return runs[io.RUN_KEYS + ["n_requirements", "n_answered", "n_satisfied", "score"]]


def parse_failure_effect(requirements: pd.DataFrame, languages=None, backbones=None,
                         method: str | None = None, source="requirements",
                         empty_status: str = "empty") -> pd.DataFrame:
    """beta and rankings with empty responses stored as unsatisfied vs treated as missing.

    Stored view: run scores over all requirements, plain CBC. Missing view:
    :func:`runs_treating_empty_as_missing`, framework means over the remaining runs, then
    :func:`estimate_beta` (``method`` None: plain if no cell is missing, else least squares).
    ``difference = beta_stored - beta_missing`` is the part of the stored interaction that the
    parse failures create. Columns: language, backbone, share_empty (share of the cell's
    requirement verdicts that are empty), n_missing_tasks, beta_stored, beta_missing,
    difference, mean_stored, mean_missing (cell means; least-squares completed means in the
    missing view), rank_raw_stored, rank_raw_missing, rank_cbc_stored, rank_cbc_missing
    (within language, 1 = best), method_missing.
    """
    stored_runs = io.runs_from_requirements(requirements, source)
    missing_runs = runs_treating_empty_as_missing(requirements, source, empty_status)
    stored = io.build_panel(stored_runs, source, languages, backbones)
    missing = io.build_panel(missing_runs, source, stored.languages, stored.backbones,
                             allow_missing_cells=True)
    if missing.tasks != stored.tasks:
        raise InputError(source, "every run of some task has only empty responses",
                            "at least one answered requirement per task")
    fit_stored = estimate_beta(stored.values, "plain")
    fit_missing = estimate_beta(missing.values, method)
    empty = (requirements["response_status"].astype(str) == empty_status)
    share = empty.groupby([requirements["language"].astype(str),
                           requirements["backbone"].astype(str)]).mean()
    frame = stored.matrix_frame(fit_stored.beta, "beta_stored")
    cells = pd.MultiIndex.from_frame(frame[["language", "backbone"]])
    frame.insert(2, "share_empty", share.reindex(cells).to_numpy())
    frame.insert(3, "n_missing_tasks", (~np.isfinite(missing.values)).sum(axis=0).ravel())
    frame["beta_missing"] = fit_missing.beta.ravel()
    frame["difference"] = frame["beta_stored"] - frame["beta_missing"]
    for view, fit in (("stored", fit_stored), ("missing", fit_missing)):
        frame[f"mean_{view}"] = fit.cell_means.ravel()
    for view, fit in (("stored", fit_stored), ("missing", fit_missing)):
        frame[f"rank_raw_{view}"] = rank_within_language(fit.cell_means).ravel()
    for view, fit in (("stored", fit_stored), ("missing", fit_missing)):
        frame[f"rank_cbc_{view}"] = rank_within_language(fit.cell_means - fit.beta).ravel()
    frame["method_missing"] = fit_missing.method
    return frame
