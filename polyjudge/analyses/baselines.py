"""The calibration methods compared in the held-out evaluation (Table 2), behind one interface.

CBC paper, section 5 and appendix D (docs/methods.md section 2). Every method maps a
:class:`HeldoutContext` (the OOB cell means ``M_ev``, the weighted in-bag cell means ``M_tr``, the
bootstrap, the panel, ...) to one language x backbone matrix per replicate, ``X`` of shape
``(R, k, m)``; the held-out score of a replicate is the mean pairwise Kendall tau-b of the rows
of ``X`` (:func:`polyjudge.cbc.bootstrap.mean_pairwise_tau`). All methods work on the whole
replicate stack at once.

Adding a method: write ``def my_method(ctx: HeldoutContext) -> np.ndarray`` returning
``(R, k, m)``, and add one line ``"My method": my_method`` to :data:`METHODS`. A method that needs
data a panel does not have raises :class:`MethodUnavailable` with the reason; the caller skips
it and logs the reason.

Dawid-Skene needs binary verdicts, given as :class:`BinaryItems` (items x language x backbone
annotators, plus the task of each item), built from the standard tables by :func:`run_items`
(run level, "score >= threshold", 100 by default: the protocol) or :func:`requirement_items`
(requirement level: the paper's appendix); both live in :mod:`polyjudge.analyses.binary_verdicts`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.special

from ..cbc.bootstrap import TaskBootstrap, weighted_cell_means
from ..cbc.estimator import double_center, double_center_weighted
from ..data.errors import say
from ..data.panel import Panel
# the verdict builders are re-exported: method authors and the held-out step find them here
from .binary_verdicts import (  # noqa: F401
                    BinaryItems, MethodUnavailable, requirement_items, run_items)
from .combat import ComBatFit, combat_fit, combat_pooled_fit  # noqa: F401


@dataclass(frozen=True)
class HeldoutContext:
    """What a method may use for ``R`` replicates of a ``k x m`` panel.

    ``M_ev`` (R, k, m): plain OOB cell means; ``M_tr`` (R, k, m): in-bag cell means weighted
    by the bootstrap multiplicities; ``rng``: for the random control when the bootstrap carries
    no permutations; ``runs`` / ``requirements``: binary verdicts for Dawid-Skene, or None.
    """

    panel: Panel
    bootstrap: TaskBootstrap
    M_ev: np.ndarray
    M_tr: np.ndarray
    rng: np.random.Generator
    runs: BinaryItems | None = None
    requirements: BinaryItems | None = None

    @classmethod
    def build(cls, panel: Panel, bootstrap: TaskBootstrap, rng=None, runs=None,
              requirements=None) -> "HeldoutContext":
        """Cell means of every replicate (one matrix product each) and the inputs."""
        return cls(panel=panel, bootstrap=bootstrap,
                   M_ev=weighted_cell_means(panel.values, bootstrap.oob),
                   M_tr=weighted_cell_means(panel.values, bootstrap.counts),
                   rng=np.random.default_rng(rng), runs=runs, requirements=requirements)


# --- location / rank baselines ---------------------------------------------------------------

def raw(ctx: HeldoutContext) -> np.ndarray:
    """Raw: ``X = M_ev``."""
    return ctx.M_ev


def cbc(ctx: HeldoutContext) -> np.ndarray:
    """CBC: ``X = M_ev - beta(M_tr)`` (interaction fitted in-bag)."""
    return ctx.M_ev - double_center(ctx.M_tr)


def cbc_weighted(ctx: HeldoutContext) -> np.ndarray:
    """CBC-Weighted: language margins weighted by ``1 / Var_l M_tr[l, b]``; same ranks as CBC."""
    return ctx.M_ev - double_center_weighted(ctx.M_tr)


def oracle(ctx: HeldoutContext) -> np.ndarray:
    """Oracle: ``X = M_ev - beta(M_ev)`` (interaction fitted on the evaluation tasks)."""
    return ctx.M_ev - double_center(ctx.M_ev)


def random_control(ctx: HeldoutContext) -> np.ndarray:
    """Random control: each language row of ``M_ev`` randomly permuted over backbones.

    The permutations are the bootstrap's ``row_permutations`` (the protocol's stream) when
    present, otherwise drawn from ``ctx.rng``.
    """
    perms = ctx.bootstrap.row_permutations
    if perms is None:
        identity = np.broadcast_to(np.arange(ctx.M_ev.shape[-1]), ctx.M_ev.shape)
        perms = ctx.rng.permuted(identity, axis=-1)
    return np.take_along_axis(ctx.M_ev, perms, axis=-1)


def per_language_norm(ctx: HeldoutContext) -> np.ndarray:
    """Per-language normalisation: z-score of each row of ``M_ev`` (ranks unchanged: = Raw)."""
    m = ctx.M_ev
    with np.errstate(invalid="ignore", divide="ignore"):
        return (m - m.mean(axis=-1, keepdims=True)) / m.std(axis=-1, keepdims=True)


def backbone_only(ctx: HeldoutContext) -> np.ndarray:
    """Backbone-only: ``M_ev`` minus the in-bag backbone (column) means ``M_tr[., b]``."""
    return ctx.M_ev - ctx.M_tr.mean(axis=-2, keepdims=True)


def z_score(ctx: HeldoutContext) -> np.ndarray:
    """Z-score: backbone-only divided by the in-bag column SD ``SD_l M_tr[l, b]`` (ddof 0)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return backbone_only(ctx) / ctx.M_tr.std(axis=-2, keepdims=True)


def _rank_bounds(x: np.ndarray, axis: int, tie_rtol: float = 1e-10):
    """Per element: how many values along ``axis`` are below it, and how many are at most it.

    Ranks (1-based) of a tie group run from ``below + 1`` to ``at_most``; values closer than
    ``tie_rtol`` times the largest absolute value along the axis are tied (as in
    :func:`polyjudge.cbc.bootstrap.pairwise_tau`), so rounding in the cell means cannot split a
    tie. Infinities (a Z-score over a backbone constant in the in-bag languages) rank beyond
    every finite value, equal infinities tied; the tolerance comes from the finite values.
    """
    x = np.moveaxis(x, axis, -1)
    finite = np.where(np.isfinite(x), np.abs(x), np.nan)
    scale = np.fmax.reduce(finite, axis=-1, keepdims=True, initial=0.0)
    tol = tie_rtol * scale[..., None]
    with np.errstate(invalid="ignore"):  # inf - inf: two equal infinities
        diff = x[..., None, :] - x[..., :, None]  # [..., i, j] = x_j - x_i
    same_infinity = np.isinf(x[..., None, :]) & (x[..., None, :] == x[..., :, None])
    diff[same_infinity] = 0.0
    below = (diff < -tol).sum(axis=-1)
    at_most = (diff <= tol).sum(axis=-1)
    return np.moveaxis(below, -1, axis), np.moveaxis(at_most, -1, axis)


def quantile(ctx: HeldoutContext) -> np.ndarray:
    """Quantile normalisation of the backbone columns to the in-bag reference distribution.

    Target ``q`` = mean over backbones of the column-sorted ``M_tr`` (k values, ascending).
    Each column of ``M_ev`` is mapped by rank over languages to ``q``; a run of exact ties
    (ranks ``lo+1..hi``) gets the mean of ``q[lo..hi-1]``.
    """
    target = np.sort(ctx.M_tr, axis=-2).mean(axis=-1)
    cum = np.concatenate([np.zeros((*target.shape[:-1], 1)), np.cumsum(target, axis=-1)], axis=-1)
    lo, hi = _rank_bounds(ctx.M_ev, axis=-2)
    lead = ctx.M_ev.shape[:-2]
    flat_cum = cum.reshape(-1, cum.shape[-1])
    rows = np.arange(flat_cum.shape[0]).reshape(*lead, 1, 1)
    with np.errstate(invalid="ignore"):  # a NaN cell has no rank: 0 / 0
        return (flat_cum[rows, hi] - flat_cum[rows, lo]) / (hi - lo)


def ensemble(ctx: HeldoutContext) -> np.ndarray:
    """Ensemble: mean within-language percentile rank ``rank / m`` (ties averaged) of
    backbone-only, z-score and quantile.

    The ranks (multiples of 1/2) are summed before the one division, so equal mean ranks stay
    exactly equal (dividing each rank first lets rounding split such ties).
    """
    parts = [backbone_only(ctx), z_score(ctx), quantile(ctx)]
    ranks = sum((lo + hi + 1) / 2 for lo, hi in (_rank_bounds(p, axis=-1) for p in parts))
    return ranks / (len(parts) * ctx.M_ev.shape[-1])


# --- ComBat (Johnson, Li & Rabinovic 2007): the fits are in polyjudge.analyses.combat -----

def combat_eb(ctx: HeldoutContext) -> np.ndarray:
    """ComBat-EB, pooled protocol form (one location/scale per language): equals Raw in rank."""
    return combat_pooled_fit(ctx.panel.values, ctx.bootstrap.counts).adjust(ctx.M_ev)


def combat(ctx: HeldoutContext) -> np.ndarray:
    """Standard ComBat (Johnson, Li & Rabinovic 2007), fitted in-bag, applied to ``M_ev``."""
    return combat_fit(ctx.panel.values, ctx.bootstrap.counts).adjust(ctx.M_ev)


# --- Dawid-Skene (two-coin EM) -----------------------------------------------------------------

@dataclass(frozen=True)
class DawidSkeneFit:
    """Two-coin Dawid-Skene per replicate: ``prior`` (R,) = P(z=1), ``sensitivity`` and
    ``specificity`` (R, A), ``posterior`` (R, I) = P(z_i = 1 | verdicts) for every item,
    ``n_iter`` (R,) EM iterations used."""

    prior: np.ndarray
    sensitivity: np.ndarray
    specificity: np.ndarray
    posterior: np.ndarray
    n_iter: np.ndarray


def _label_patterns(labels: np.ndarray):
    """Distinct verdict rows of (I, A) labels: ``y`` (U, A) with 0 for missing, the observed
    mask, and each item's pattern index. EM depends on an item only through its pattern."""
    coded = np.where(np.isfinite(labels), labels, 2.0)
    patterns, inverse = np.unique(coded, axis=0, return_inverse=True)
    observed = (patterns != 2.0).astype(float)
    return np.where(observed > 0, patterns, 0.0), observed, inverse.ravel()


def _pattern_counts(mask: np.ndarray, inverse: np.ndarray, n_patterns: int) -> np.ndarray:
    """(R, U) number of masked items per pattern (``mask`` (R, I) of 0/1: exact sums, no
    items x patterns matrix, which at 10^5 distinct items would take tens of GB)."""
    mask = np.asarray(mask, dtype=float)
    rows = np.arange(len(mask))[:, None] * n_patterns
    return np.bincount((rows + inverse).ravel(), weights=mask.ravel(),
                       minlength=len(mask) * n_patterns).reshape(len(mask), n_patterns)


def _ds_em(y, observed, counts, max_iter, tol, smoothing, clip, init_clip):
    """Two-coin EM on verdict patterns, ``counts[r, u]`` training items of pattern u.

    Sums over items become count-weighted sums over patterns, so an M step and an E step are
    one matrix product each (complete verdicts); converged replicates are frozen and drop out.
    """
    complete = bool(observed.all())  # then the "verdict given" sums need no product
    n_ann = y.shape[1]
    pos = counts @ y  # training items with verdict 1, per annotator
    giv = counts @ observed  # training items with a verdict
    n_fit = counts.sum(axis=1)
    init = np.clip(y.sum(axis=1) / np.maximum(observed.sum(axis=1), 1), init_clip, 1 - init_clip)
    post = np.broadcast_to(init, counts.shape).copy()
    prior = np.full(len(counts), 0.5)
    sens = np.full((len(counts), n_ann), 0.7)
    spec = sens.copy()
    n_iter = np.zeros(len(counts), dtype=np.int64)
    active = np.arange(len(counts))
    for _ in range(max_iter):
        c, p = counts[active], post[active]
        cp = c * p
        pos1 = cp @ y  # sum_i p_i y_ia
        giv1 = cp.sum(axis=1, keepdims=True) if complete else cp @ observed  # sum_i p_i
        pos0, giv0 = giv[active] - pos[active] - (giv1 - pos1), giv[active] - giv1
        new_prior = (cp.sum(axis=1) + smoothing) / (n_fit[active] + 2 * smoothing)
        new_sens = np.clip((pos1 + smoothing) / (giv1 + 2 * smoothing), clip, 1 - clip)
        new_spec = np.clip((pos0 + smoothing) / (giv0 + 2 * smoothing), clip, 1 - clip)
        # log-odds = logit(prior) + sum_a [y (log s - log(1-c)) + (1-y)(log(1-s) - log c)]
        w0 = np.log1p(-new_sens) - np.log(new_spec)
        w1 = np.log(new_sens) - np.log1p(-new_spec)
        given = w0.sum(axis=1, keepdims=True) if complete else w0 @ observed.T
        new_post = scipy.special.expit(np.log(new_prior / (1 - new_prior))[:, None]
                                       + (w1 - w0) @ y.T + given)
        moved = np.where(c > 0, np.abs(new_post - p), 0.0).max(axis=1)
        prior[active], sens[active], spec[active] = new_prior, new_sens, new_spec
        post[active] = new_post
        n_iter[active] += 1
        active = active[moved >= tol]
        if not len(active):
            break
    return prior, sens, spec, post, n_iter


def dawid_skene(labels: np.ndarray, fit: np.ndarray, max_iter: int = 25, tol: float = 1e-6,
                smoothing: float = 1.0, clip: float = 1e-4,
                init_clip: float = 1e-3) -> DawidSkeneFit:
    """Binary two-coin Dawid-Skene EM (Dawid & Skene 1979), one fit per row of ``fit``.

    ``labels`` (I, A) in {0, 1} with NaN = no verdict; ``fit`` (R, I) bool selects each
    replicate's training items (the protocol: the distinct in-bag items, multiplicities
    unused). Protocol (docs/methods.md section 2): initial posterior = the item's mean verdict
    clipped to ``[init_clip, 1 - init_clip]``; then repeat at most ``max_iter`` times: M step with
    Laplace smoothing ``smoothing`` (sums over training items and given verdicts),

        prior = (sum_i p_i + 1) / (I + 2),
        sens_a = (sum_i p_i y_ia + 1) / (sum_i p_i + 2),
        spec_a = (sum_i (1-p_i)(1-y_ia) + 1) / (sum_i (1-p_i) + 2),

    sens/spec clipped to ``[clip, 1 - clip]``; E step; stop when no training posterior moved
    by ``tol`` or more. Because the loop starts from a posterior, the protocol's initial
    sens = spec = 0.7 never enter the fit. Replicates stop independently; the returned
    posterior covers all items (training or not) under the final parameters.
    """
    y, observed, inverse = _label_patterns(labels)
    counts = _pattern_counts(fit, inverse, len(y))
    prior, sens, spec, post, n_iter = _ds_em(y, observed, counts, max_iter, tol, smoothing,
                                             clip, init_clip)
    return DawidSkeneFit(prior=prior, sensitivity=sens, specificity=spec,
                         posterior=post[:, inverse], n_iter=n_iter)


def dawid_skene_scores(items: BinaryItems, bootstrap: TaskBootstrap, max_iter: int = 25,
                       tol: float = 1e-6, smoothing: float = 1.0, clip: float = 1e-4,
                       init_clip: float = 1e-3) -> np.ndarray:
    """Held-out Dawid-Skene score matrix ``(R, k, m)`` (protocol, docs/methods.md section 2).

    EM (:func:`dawid_skene`) fitted on the distinct in-bag items; the score of annotator
    (l, b) is 100 x the mean over its OOB items of the posterior probability that the latent
    label equals its verdict, ``y p + (1 - y)(1 - p)``, with p from the fitted parameters and
    the item's verdicts.
    """
    k, m = items.labels.shape[1:]
    y, observed, inverse = _label_patterns(items.labels.reshape(len(items.task), k * m))
    fit = _pattern_counts(bootstrap.counts[:, items.task] > 0, inverse, len(y))
    held = _pattern_counts(bootstrap.oob[:, items.task], inverse, len(y))
    post = _ds_em(y, observed, fit, max_iter, tol, smoothing, clip, init_clip)[3]
    agree = (held * post) @ y + (held * (1 - post)) @ (observed - y)
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = 100 * agree / (held @ observed)
    return scores.reshape(-1, k, m)


def dawid_skene_runs(ctx: HeldoutContext) -> np.ndarray:
    """Dawid-Skene, protocol: run-level items (task, framework), verdict "run score == 100"."""
    if ctx.runs is None:
        raise MethodUnavailable("no run table with frameworks was given (run-level verdicts)")
    verdicts = ctx.runs.labels[np.isfinite(ctx.runs.labels)]
    if len(verdicts) and verdicts.min() == verdicts.max():
        raise MethodUnavailable(
            f"every run is a {'pass' if verdicts[0] else 'fail'}: a run passes when its score "
            f"reaches the verdict threshold {ctx.runs.threshold:g}, and Dawid-Skene needs both; "
            + threshold_fix(ctx.panel.values, ctx.runs.scale))
    return dawid_skene_scores(ctx.runs, ctx.bootstrap)


def splitting_threshold(values: np.ndarray, scale=None) -> float | None:
    """A verdict threshold some runs reach and others do not: the middle of the scale if it
    lies between the lowest and the highest task score, else their median; None if neither
    does (a task score reaching it means one of its runs does, one below it one that does not)."""
    scores = np.asarray(values, dtype=float)
    scores = scores[np.isfinite(scores)]
    if not len(scores):
        return None
    middle = [(scale[0] + scale[1]) / 2] if scale is not None else []
    median = float(np.median(scores))
    for threshold in middle + [float(f"{median:.3g}"), median]:
        if scores.min() < threshold <= scores.max():
            return threshold
    return None


def threshold_fix(values: np.ndarray, scale=None) -> str:
    """The fix of a Dawid-Skene threshold that every run passes or fails: a score of the
    panel's own scale (``scale``: its score_range) that splits its runs."""
    on = f" [{scale[0]:g}, {scale[1]:g}]" if scale is not None else ""
    fix = (f"set {say('verdict_threshold')} to a score on the panel's scale{on} that some runs "
           "reach and others do not")
    threshold = splitting_threshold(values, scale)
    if threshold is not None:
        fix += f", e.g. {say('verdict_threshold example', f'{threshold:g}')}"
    return (fix + " (the default 100 is DevAI's protocol: a run that satisfies every requirement, "
            "on its 0-100 pass-rate scale)")


def dawid_skene_requirements(ctx: HeldoutContext) -> np.ndarray:
    """Dawid-Skene as in the paper's appendix: requirement-level items, verdict "satisfied"."""
    if ctx.requirements is None:
        raise MethodUnavailable("no requirement table was given (requirement-level verdicts)")
    return dawid_skene_scores(ctx.requirements, ctx.bootstrap)


METHODS = {
    "Raw": raw,
    "CBC": cbc,
    "CBC-Weighted": cbc_weighted,
    "Oracle": oracle,
    "Random": random_control,
    "Per-language norm": per_language_norm,
    "Backbone-only": backbone_only,
    "Z-score": z_score,
    "Quantile": quantile,
    "Ensemble": ensemble,
    "ComBat-EB": combat_eb,
    "ComBat": combat,
    "Dawid-Skene": dawid_skene_runs,
    "Dawid-Skene (requirement)": dawid_skene_requirements,
}
