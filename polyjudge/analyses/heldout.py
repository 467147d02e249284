"""Held-out cross-task rank consistency (Table 2) and decision-level agreement with the oracle.

CBC paper, section 5 (docs/methods.md sections 2 and 3). Each replicate of a task bootstrap fits a
method on the in-bag tasks and scores it on the out-of-bag tasks by the mean pairwise Kendall
tau-b across languages (:mod:`polyjudge.cbc.bootstrap`); the methods are those of
:data:`polyjudge.analyses.baselines.METHODS`. Published DevAI values (1,000 replicates, seed 7):
Raw 0.650 and CBC 0.902 (replicate spread 0.610-0.714 and 0.795-0.968); decisions (seed 307):
CBC 100%, Raw 68.5%, regret 3.23.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..cbc.bootstrap import (
    TaskBootstrap,
    mean_pairwise_tau,
    replicate_chunk,
    task_bootstrap_chunks,
)
from ..cbc.estimator import double_center
from ..data.panel import Panel
from ..data.shape import empty_pairs, named_pairs
from .baselines import (
    METHODS,
    BinaryItems,
    HeldoutContext,
    MethodUnavailable,
    requirement_items,
    run_items,
)

log = logging.getLogger(__name__)

DECISION_NOTE = (
    "CBC's agreement with the oracle is structural: M_tr - beta(M_tr) and the oracle "
    "M_ev - beta(M_ev) are both additive, so in every language the CBC pick is the backbone with "
    "the highest overall (column) mean of the in-bag tasks and the oracle winner the one with the "
    "highest overall mean of the out-of-bag tasks; they agree whenever these coincide. It is a "
    "model-based reference, not a human-grounded correctness measure.")


def _methods(methods) -> dict:
    """Name -> function: None = all registered methods, names select from the registry."""
    if methods is None:
        return dict(METHODS)
    if isinstance(methods, Mapping):
        return dict(methods)
    methods = list(methods)
    unknown = [name for name in methods if name not in METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; known: {list(METHODS)}")
    return {name: METHODS[name] for name in methods}


def _items(data, builder, panel: Panel) -> BinaryItems | None:
    """Binary verdicts from a standard table (or already built, or None)."""
    if data is None or isinstance(data, BinaryItems):
        return data
    return builder(data, panel)


def _check_panel(panel: Panel) -> None:
    n, k, m = panel.shape
    if n < 2 or k < 2 or m < 2:
        raise ValueError(f"held-out tau needs >= 2 tasks, languages and backbones; "
                         f"the panel is {n} x {k} x {m}")


def _method_taus(ctx: HeldoutContext, methods: dict, reasons: dict | None = None,
                 log_skipped: bool = True) -> dict[str, np.ndarray]:
    """Per-replicate tau of every method that can run; unavailable ones are skipped, logged
    (unless ``log_skipped`` is False: the caller says it once) and their reason stored in
    ``reasons`` when given."""
    taus = {}
    expected = ctx.M_ev.shape
    for name, method in methods.items():
        try:
            matrix = method(ctx)
        except MethodUnavailable as reason:
            if log_skipped:
                log.warning("skipping method %s: %s", name, reason)
            if reasons is not None:
                reasons[name] = f"not run: {reason}"
            continue
        if matrix.shape != expected:
            raise ValueError(f"method {name} returned shape {matrix.shape}, expected {expected}")
        taus[name] = mean_pairwise_tau(matrix)
    return taus


def _per_replicate(panel: Panel, *items) -> int:
    """Rough count of float64 working values per replicate of the held-out methods: the
    bootstrap rows (draws, counts, weights: ``4 n``), the cell-mean matrices with the rank
    comparisons of Quantile / Ensemble (``k m (k + m)``), and the pattern arrays of
    Dawid-Skene per item set."""
    n, k, m = panel.shape
    return 4 * n + k * m * (k + m + 8) + sum(4 * len(i.task) for i in items if i is not None)


def heldout_replicates(panel: Panel, methods=None, n_replicates: int = 1000, seed: int = 7,
                       runs=None, requirements=None, chunk_size: int | None = None,
                       log_skipped: bool = True) -> pd.DataFrame:
    """Held-out tau of every method in every bootstrap replicate: columns replicate, method, tau.

    ``methods``: None (all of :data:`METHODS`), a list of registered names, or a name ->
    function mapping. ``runs`` / ``requirements``: the standard run / requirement tables (or
    :class:`BinaryItems`) for the Dawid-Skene methods; without them those methods are skipped
    with a logged reason (logged once; not at all with ``log_skipped`` False, for a caller
    that says it). The bootstrap stream is the protocol's (``default_rng(seed)``, random
    control permutations interleaved), so replicate r is the same draw whichever methods run.
    ``tau`` is NaN in a replicate where no language pair is defined (e.g. all rows constant).

    Replicates are processed in chunks of ``chunk_size`` (default: as many as fit
    :data:`polyjudge.cbc.bootstrap.MEMORY_BUDGET`), drawn in order from the one stream, so memory
    is bounded whatever ``n_replicates`` and the result does not depend on the chunk size.
    """
    _check_panel(panel)
    n, k, m = panel.shape
    runs = _items(runs, run_items, panel)
    requirements = _items(requirements, requirement_items, panel)
    chunk_size = chunk_size or replicate_chunk(n_replicates,
                                               _per_replicate(panel, runs, requirements))
    rng = np.random.default_rng(seed)
    active, parts = _methods(methods), {}
    for bootstrap in task_bootstrap_chunks(n, n_replicates, rng, chunk_size, (k, m)):
        ctx = HeldoutContext.build(panel, bootstrap, rng, runs=runs, requirements=requirements)
        for name, tau in _method_taus(ctx, active, log_skipped=log_skipped).items():
            parts.setdefault(name, []).append(tau)
        active = {name: active[name] for name in parts}  # an unavailable method is logged once
    taus = {name: np.concatenate(chunks) for name, chunks in parts.items()}
    return pd.DataFrame({
        "replicate": np.tile(np.arange(n_replicates), len(taus)),
        "method": np.repeat(list(taus), n_replicates),
        "tau": np.concatenate(list(taus.values())) if taus else np.array([], float),
    })


def full_fit_tau(panel: Panel, methods=None, seed: int = 7, runs=None,
                 requirements=None, log_skipped: bool = True) -> pd.DataFrame:
    """In-sample tau (columns method, full_fit, reason): every task is both training and
    evaluation. A method that cannot run on the panel has a row with its reason (else ""),
    also logged unless ``log_skipped`` is False.

    A sanity check, not a generalisation estimate (published: Raw 0.629, CBC 1.000).
    """
    _check_panel(panel)
    ctx = HeldoutContext.build(panel, TaskBootstrap.full_fit(panel.shape[0]), seed,
                               runs=_items(runs, run_items, panel),
                               requirements=_items(requirements, requirement_items, panel))
    active, reasons = _methods(methods), {}
    taus = _method_taus(ctx, active, reasons, log_skipped)
    return pd.DataFrame({"method": list(active),
                         "full_fit": [float(taus[name][0]) if name in taus else np.nan
                                      for name in active],
                         "reason": [reasons.get(name, "") for name in active]})


def heldout_tables(panel: Panel, methods=None, n_replicates: int = 1000, seed: int = 7,
                   reference: str = "CBC", runs=None, requirements=None):
    """The held-out step on a panel: (tau summary, replicates, paired comparison, skipped
    methods) from :func:`heldout_replicates`, :func:`full_fit_tau`, :func:`summarise_tau` and
    :func:`paired_comparison`. A method without a value is logged once, by the summary."""
    runs = _items(runs, run_items, panel)
    requirements = _items(requirements, requirement_items, panel)
    table = heldout_replicates(panel, methods, n_replicates, seed, runs, requirements,
                               log_skipped=False)
    full_fit = full_fit_tau(panel, methods, seed, runs, requirements, log_skipped=False)
    skipped = tuple(full_fit.loc[full_fit["reason"] != "", "method"])
    return (summarise_tau(table, full_fit, panel), table, paired_comparison(table, reference),
            skipped)


def undefined_reason(panel: Panel) -> str:
    """Why a method that ran has no defined tau in any replicate, as far as the panel tells."""
    observed = np.isfinite(panel.values).any(axis=0)
    if not observed.all():
        cells, fix = empty_pairs(observed, panel.languages, panel.backbones)
        return (f"no defined tau: language x backbone cell(s) {named_pairs(cells, 4)} have no "
                f"task, where this method has no value ({fix})")
    return ("no defined tau in any replicate: in every out-of-bag sample a language's scores "
            "are missing or all equal")


def summarise_tau(replicates: pd.DataFrame, full_fit: pd.DataFrame | None = None,
                  panel: Panel | None = None) -> pd.DataFrame:
    """Per method: mean, ``spread_low`` / ``spread_high`` (the 2.5/97.5 percentiles, linear, of
    tau over replicates), full-fit tau, the number of replicates with a defined tau (NaN
    replicates are left out) and ``reason``:
    why a method has no value (it cannot run on the panel, or its tau is undefined in every
    replicate; logged), "" where it has one. Methods in ``full_fit``'s order.

    The spread is not a confidence interval: it describes the replicates' out-of-bag taus, and
    no task-bootstrap interval tried covers the noise-free tau at its nominal level
    (``benchmarks/heldout_coverage.py``; docs/methods.md section 2)."""
    rows = []
    for method, tau in replicates.groupby("method", sort=False)["tau"]:
        tau = tau.to_numpy(float)
        tau = tau[np.isfinite(tau)]
        low, high = np.percentile(tau, [2.5, 97.5]) if len(tau) else (np.nan, np.nan)
        rows.append({"method": method, "mean": tau.mean() if len(tau) else np.nan,
                     "spread_low": low, "spread_high": high, "n_replicates": len(tau)})
    summary = pd.DataFrame(rows, columns=["method", "mean", "spread_low", "spread_high",
                                          "n_replicates"])
    fit = full_fit if full_fit is not None else pd.DataFrame({"method": [], "full_fit": []})
    if "reason" not in fit:
        fit = fit.assign(reason="")
    summary = fit[["method", "full_fit", "reason"]].merge(summary, on="method", how="outer",
                                                          sort=False)
    # an outer merge sorts its keys: methods in full_fit's order, then the replicates' order
    order = list(fit["method"]) + [row["method"] for row in rows
                                   if row["method"] not in set(fit["method"])]
    summary = summary.set_index("method").loc[order].reset_index()
    summary["n_replicates"] = summary["n_replicates"].fillna(0).astype(np.int64)
    summary["reason"] = summary["reason"].fillna("")
    undefined = (summary["n_replicates"] == 0) & (summary["reason"] == "")
    if undefined.any():
        summary.loc[undefined, "reason"] = (undefined_reason(panel) if panel is not None else
                                            "no defined tau in any replicate")
    for row in summary.loc[summary["reason"] != ""].itertuples():
        log.warning("held-out tau of %s: %s", row.method, row.reason)
    return summary[["method", "mean", "spread_low", "spread_high", "full_fit", "n_replicates",
                    "reason"]]


def paired_comparison(replicates: pd.DataFrame, reference: str = "CBC") -> pd.DataFrame:
    """Paired difference ``tau(reference) - tau(method)`` over the same replicates.

    Columns: method, share_reference_higher (share of replicates where the reference is
    strictly higher), mean_difference, spread_low, spread_high (2.5/97.5 percentiles of the
    replicates' differences: a spread, not a confidence interval, as in :func:`summarise_tau`),
    n_replicates (replicates where both are defined). Published: CBC > ComBat-EB in all 1,000.
    """
    wide = replicates.pivot(index="replicate", columns="method", values="tau")
    if reference not in wide:
        raise ValueError(f"reference method {reference!r} is not among {list(wide.columns)}")
    rows = []
    for method in pd.unique(replicates["method"]):
        if method == reference:
            continue
        diff = (wide[reference] - wide[method]).to_numpy(float)
        diff = diff[np.isfinite(diff)]
        low, high = np.percentile(diff, [2.5, 97.5]) if len(diff) else (np.nan, np.nan)
        rows.append({"method": method,
                     "share_reference_higher": (diff > 0).mean() if len(diff) else np.nan,
                     "mean_difference": diff.mean() if len(diff) else np.nan,
                     "spread_low": low, "spread_high": high, "n_replicates": len(diff)})
    return pd.DataFrame(rows, columns=["method", "share_reference_higher", "mean_difference",
                                       "spread_low", "spread_high", "n_replicates"])


def _decision_summary(correct: np.ndarray, regret: np.ndarray) -> dict:
    """Accuracy with a Clopper-Pearson 95% interval, and regret mean and 2.5/97.5 percentiles.

    ``correct`` / ``regret`` are (R, L): the regret interval is over replicates of the mean
    regret across the L decisions of a replicate.
    """
    import scipy.stats  # here, not at the top: only the decisions step needs it (~0.5 s)

    n, hits = correct.size, int(correct.sum())
    ci = scipy.stats.binomtest(hits, n).proportion_ci(confidence_level=0.95, method="exact")
    per_replicate = regret.mean(axis=1)
    low, high = np.percentile(per_replicate, [2.5, 97.5])
    return {"accuracy": hits / n, "ci_low": float(ci.low), "ci_high": float(ci.high),
            "n_correct": hits, "n_decisions": n, "regret_mean": float(per_replicate.mean()),
            "regret_ci_low": float(low), "regret_ci_high": float(high)}


def decision_agreement(panel: Panel, n_replicates: int = 1000, seed: int = 307,
                       chunk_size: int | None = None) -> dict:
    """Decision-level agreement of Raw and CBC with the held-out additive-model oracle.

    Per replicate and language: oracle winner ``argmax_b (M_ev - beta(M_ev))``; Raw picks
    ``argmax_b M_tr``, CBC ``argmax_b (M_tr - beta(M_tr))``; correct iff pick = winner, regret =
    ``O(winner) - O(pick)``. Accuracy over all R x k decisions with a Clopper-Pearson interval,
    regret mean with 2.5/97.5 percentiles over replicates; overall and per language. Proportions
    in [0, 1]. Published (DevAI, seed 307): CBC 100%; Raw 68.5% [67.44, 69.49], regret 3.23
    [0.90, 5.82]. The result's "note" explains why CBC's agreement is structural. Replicates
    are processed in chunks as in :func:`heldout_replicates` (same result whatever the chunk);
    a replicate without an OOB task or with an empty cell is skipped (``n_replicates_used``).
    """
    _check_panel(panel)
    n, k, m = panel.shape
    chunk_size = chunk_size or replicate_chunk(n_replicates, 4 * n + 12 * k * m)
    outcomes = {"Raw": ([], []), "CBC": ([], [])}  # per method: correct, regret chunks
    for bootstrap in task_bootstrap_chunks(n, n_replicates, np.random.default_rng(seed),
                                           chunk_size):
        ctx = HeldoutContext.build(panel, bootstrap, seed)
        # a replicate that draws every task (no OOB task; likely with few tasks) or leaves a
        # cell without scores has no oracle: it is skipped and counted
        usable = (np.isfinite(ctx.M_ev).all(axis=(1, 2)) & np.isfinite(ctx.M_tr).all(axis=(1, 2)))
        M_ev, M_tr = ctx.M_ev[usable], ctx.M_tr[usable]
        oracle = M_ev - double_center(M_ev)
        winner = oracle.argmax(axis=-1)
        best = np.take_along_axis(oracle, winner[..., None], axis=-1)[..., 0]
        picks = {"Raw": M_tr.argmax(axis=-1),
                 "CBC": (M_tr - double_center(M_tr)).argmax(axis=-1)}
        for name, pick in picks.items():
            outcomes[name][0].append(pick == winner)
            outcomes[name][1].append(
                best - np.take_along_axis(oracle, pick[..., None], axis=-1)[..., 0])
    used = sum(len(chunk) for chunk in outcomes["Raw"][0])
    if used == 0:
        raise ValueError(f"decision agreement: none of the {n_replicates} replicates has an "
                         "in-bag and an out-of-bag score in every language x backbone cell "
                         f"({n} tasks); it needs more tasks or a complete panel")
    result = {"n_replicates": n_replicates, "n_replicates_used": used, "seed": seed,
              "note": DECISION_NOTE, "methods": {}}
    for name, (correct, regret) in outcomes.items():
        correct, regret = np.concatenate(correct), np.concatenate(regret)
        result["methods"][name] = {
            "overall": _decision_summary(correct, regret),
            "per_language": {lang: _decision_summary(correct[:, [l]], regret[:, [l]])
                             for l, lang in enumerate(panel.languages)},
        }
    return result
