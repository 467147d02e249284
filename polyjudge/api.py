"""The stable public API: each analysis of the workflow in one call on a pandas table.

A run table is long: one row per judge run, with task, language, backbone, score and optionally
framework (repeated runs of a cell; none means one run per cell) columns, named by the keyword
arguments. Every function validates it exactly as the workflow's ingest step does
(:func:`polyjudge.data.io.validate_runs`, :func:`polyjudge.data.io.build_panel`), so bad input
raises the same :class:`~polyjudge.data.errors.InputError` message, naming ``source`` instead of
the file. The rule scripts call these functions too, so a notebook and the workflow compute the
same numbers.

Each function returns a frozen result of :mod:`polyjudge.results` with tidy DataFrames and, where
the workflow draws a figure, ``plot()`` returning that figure. The run-table keywords are those
of :class:`~polyjudge.data.spec.RunSpec`, documented once there. The names in
:data:`polyjudge.__all__` are stable.
"""
from __future__ import annotations

import dataclasses
import importlib
import re
from collections.abc import Mapping

import numpy as np
import pandas as pd

from .cbc.summary import R2_MODELS, SIGMA_DEFINITIONS, cbc_summary  # noqa: F401 (public here)
from .data import io, shape
from .data.errors import api_messages
from .data.panel import Panel
from .data.spec import RUN_TABLE_PARAMETERS, RunSpec
from .results import CMI, Calibration, Heldout, JudgeLS, Reversal

__all__ = ["Calibration", "Heldout", "Reversal", "CMI", "JudgeLS", "calibrate", "heldout",
           "reversal", "cmi_test", "judge_ls", "prepare_runs"]


def _module(name: str):
    """An analysis module, imported on first use (keeps ``import polyjudge`` light)."""
    return importlib.import_module(f"polyjudge.{name}")


def _run_table_doc(function):
    """Fill the ``{run_table}`` line of a docstring with the run-table keywords of
    :class:`~polyjudge.data.spec.RunSpec`, indented as that line is: written once."""
    def fill(match):
        return "\n".join(match.group(1) + line if line else ""
                         for line in RUN_TABLE_PARAMETERS.splitlines())
    function.__doc__ = re.sub(r"^( *)\{run_table\}$", fill, function.__doc__, flags=re.M)
    return function


# --- run table -> task-level panel ---------------------------------------------------------------

@api_messages
@_run_table_doc
def prepare_runs(runs: pd.DataFrame, *, task: str = "task", language: str = "language",
                 backbone: str = "backbone", score: str = "score", framework: str = "framework",
                 languages=None, backbones=None, score_range=None, missing: str = "error",
                 source="runs") -> tuple[pd.DataFrame, Panel]:
    """Validate a run table and average its runs over frameworks into the panel ``T[t, l, b]``.

    The workflow's ingest step (docs/methods.md section 0): columns renamed to the standard names,
    checked (:func:`polyjudge.data.io.validate_runs`: keys, numeric scores in ``score_range``, NaN
    scores an error unless ``missing="omit"``), then averaged per task x language x backbone cell
    (:func:`polyjudge.data.io.build_panel`; missing cells allowed only with ``missing="omit"``):
    :meth:`polyjudge.data.spec.RunSpec.prepare`.

    Parameters
    ----------
    runs : pandas.DataFrame
        One row per judge run.
    {run_table}

    Returns
    -------
    runs : pandas.DataFrame
        The standard run table (task, language, backbone, score, framework).
    panel : Panel
        The task-level :class:`~polyjudge.data.panel.Panel`.
    """
    return RunSpec.from_kwargs(**locals()).prepare(runs)


# --- CBC -----------------------------------------------------------------------------------------

@api_messages
@_run_table_doc
def calibrate(runs: pd.DataFrame, *, task: str = "task", language: str = "language",
              backbone: str = "backbone", score: str = "score", framework: str = "framework",
              languages=None, backbones=None, score_range=None, missing: str = "error",
              estimator: str | None = None, eps: float = 0.05, source="runs") -> Calibration:
    """CBC: ``beta[l, b] = M[l, b] - M[., b] - M[l, .] + M[., .]`` of the cell means, ``T - beta``.

    CBC paper, section 3; docs/methods.md section 1 (radius: the finite-sample proposition, at
    level ``eps``). On an incomplete panel (``missing="omit"``) beta is estimated by least
    squares unless ``estimator`` names another; ``summary["estimator"]`` says which. R^2 is that
    of the run-level one-hot OLS models of ``summary["r2_models"]``.

    Parameters
    ----------
    runs : pandas.DataFrame
        One row per judge run.
    {run_table}
    estimator : str, optional
        One of :data:`polyjudge.analyses.missing.METHODS` (default: ``plain`` on a complete
        panel, ``least_squares`` on an incomplete one).
    eps : float, default 0.05
        Level of the finite-sample radius.

    Returns
    -------
    Calibration
        beta, beta_weighted, rankings, calibrated scores, summary and the panel.
    """
    checked, panel = RunSpec.from_kwargs(**locals()).prepare(runs)
    shape.require_two_way(panel, source)  # before the R^2 fits, which need two of each too
    estimator_module = _module("cbc.estimator")
    r2 = (estimator_module.ols_r_squared(checked, estimator_module.TWO_WAY_TERMS),
          estimator_module.ols_r_squared(checked, estimator_module.FULL_TERMS))
    return calibrate_panel(panel, n_runs=len(checked), r2=r2, estimator=estimator, eps=eps,
                           source=source)


def estimate_cbc(panel: Panel, estimator: str | None = None, source="panel"):
    """The interaction of a task-level panel by ``estimator`` (None: plain on a complete panel,
    least squares on an incomplete one), after the shape checks of :mod:`polyjudge.data.shape`:
    ``(estimate, result)``, the :class:`~polyjudge.analyses.missing.InteractionEstimate` and
    the :class:`~polyjudge.cbc.estimator.CBCResult` of its beta. :func:`calibrate_panel` and
    :meth:`polyjudge.Calibrator.fit_panel` fit through it."""
    shape.require_two_way(panel, source)
    shape.require_pairs(panel, source)
    estimate = _module("analyses.missing").estimate_beta(panel.values, estimator)
    return estimate, _module("cbc.estimator").cbc_result(estimate.cell_means, estimate.beta)


def calibrate_panel(panel: Panel, *, n_runs: int, r2: tuple[float, float],
                    estimator: str | None = None, eps: float = 0.05,
                    source="panel") -> Calibration:
    """:func:`calibrate` on a task-level panel whose run count and run-level R^2 (two-way,
    full) are known: the workflow's cbc step, with both from the streamed ingest
    (:mod:`polyjudge.data.streaming`, ``inputs.json``), so the runs are not read again.
    A panel of one language or one backbone, or with a language x backbone cell without any
    task, stops naming them (:mod:`polyjudge.data.shape`)."""
    estimate, result = estimate_cbc(panel, estimator, source)
    calibrated = Panel(_module("cbc.estimator").cbc_calibrate(panel.values, result.beta),
                       panel.tasks, panel.languages, panel.backbones, panel.strata, panel.n_runs)
    summary = cbc_summary(panel, result, method=estimate.method, note=estimate.note,
                          n_runs=n_runs, r2=r2, eps=eps)
    return Calibration(beta=panel.matrix_frame(result.beta, "beta"),
                       beta_weighted=panel.matrix_frame(result.beta_weighted, "beta"),
                       rankings=_module("cbc.estimator").rankings_frame(panel, result),
                       calibrated=calibrated.to_frame(), summary=summary, panel=panel)


# --- held-out tau (Table 2) ----------------------------------------------------------------------

@api_messages
@_run_table_doc
def heldout(runs: pd.DataFrame, *, methods=None, replicates: int = 1000, seed: int = 7,
            reference: str = "CBC", requirements: pd.DataFrame | None = None,
            run_verdicts: bool = True, verdict_threshold: float = 100.0, task: str = "task",
            language: str = "language", backbone: str = "backbone", score: str = "score",
            framework: str = "framework",
            languages=None, backbones=None, score_range=None, missing: str = "error",
            source="runs") -> Heldout:
    """Table 2: each method fitted on the in-bag tasks of a task bootstrap, scored out of bag.

    Score of a replicate: mean pairwise Kendall tau-b across languages of the backbone order the
    method gives on the out-of-bag cell means (CBC paper, section 5; docs/methods.md section 2;
    the protocol's stream ``default_rng(seed)``). A method that cannot run on the panel, or
    whose tau is undefined in every replicate, keeps its row in ``tau`` with NaN values and its
    ``reason`` (logged; listed in ``skipped`` when it could not run).

    Parameters
    ----------
    runs : pandas.DataFrame
        One row per judge run.
    methods : sequence of str, optional
        Names of :data:`polyjudge.analyses.baselines.METHODS` (default: all).
    replicates : int, default 1000
        Task-bootstrap replicates.
    seed : int, default 7
        Seed of the bootstrap stream.
    reference : str, default "CBC"
        The method every other is paired against.
    requirements : pandas.DataFrame, optional
        Task, language, backbone, framework, requirement_id, satisfied (renamed with the same
        column arguments), for Dawid-Skene's requirement variant.
    run_verdicts : bool, default True
        Give Dawid-Skene run verdicts ``score >= verdict_threshold``; False for scores that are
        not pass rates.
    verdict_threshold : float, default 100.0
        The protocol's "run score 100" on a 0-100 pass-rate scale.
    {run_table}

    Returns
    -------
    Heldout
        tau per method, the replicates, the paired comparisons and the skipped methods.
    """
    checked, panel = RunSpec.from_kwargs(**locals()).prepare(runs)
    shape.require_two_way(panel, source, "held-out rank consistency")
    data = ({"runs": _module("analyses.baselines").run_items(checked, panel, verdict_threshold,
                                                             score_range)}
            if run_verdicts else {})
    if requirements is not None:
        names = {"task": task, "language": language, "backbone": backbone,
                 "framework": framework}
        table = io.rename_columns(requirements, names)
        io.runs_from_requirements(table, "requirements", names)  # keys and 0/1 verdicts
        data["requirements"] = io.with_single_framework(table)
    methods = None if methods is None else list(methods)
    tau, table, paired, skipped = _module("analyses.heldout").heldout_tables(
        panel, methods, replicates, seed, reference, **data)
    return Heldout(tau=tau, replicates=table, paired=paired, skipped=skipped)


# --- rank reversal -------------------------------------------------------------------------------

@api_messages
@_run_table_doc
def reversal(runs: pd.DataFrame, *, fdr: float = 0.05, permutations: int = 999, seed: int = 507,
             task: str = "task", language: str = "language", backbone: str = "backbone",
             score: str = "score", framework: str = "framework", languages=None, backbones=None,
             score_range=None, missing: str = "error", source="runs") -> Reversal:
    """Backbone pairs whose order reverses between two languages, tested per pair and globally.

    Gap ``d(l) = M[l, i] - M[l, j]``; witnesses ``(a, b) = argmin d(a) d(b)``; strength
    ``delta = max(0, -d(a) d(b))``; intersection-union p of two one-sided task t-tests,
    Benjamini-Hochberg q at ``fdr`` (CBC paper, sections 3.2 and 5; docs/methods.md section 4).

    Parameters
    ----------
    runs : pandas.DataFrame
        One row per judge run.
    fdr : float, default 0.05
        False discovery rate of the pair tests.
    permutations : int, default 999
        Within-(task, backbone) residual permutations of the additive fit for the global test
        of the reversal count.
    seed : int, default 507
        Seed of the permutations.
    {run_table}

    Returns
    -------
    Reversal
        One row per backbone pair and the summary (counts, top backbones, the global test).
    """
    _, panel = RunSpec.from_kwargs(**locals()).prepare(runs)
    shape.require_two_way(panel, source, "rank reversal")
    module = _module("analyses.reversal")
    pairs = module.rank_reversal(panel, fdr)
    test = module.reversal_count_test(panel, permutations, seed)
    summary = module.reversal_summary(pairs, module.top_backbone_per_language(panel), test, fdr)
    summary["seed"] = seed
    return Reversal(pairs=pairs, summary=summary)


# --- conditional mutual information --------------------------------------------------------------

CMI_CONVENTIONS = {
    "protocol": "neighbours within the k-th-neighbour radius counted inclusively, the point "
                "itself excluded, floored at 1 (the published protocol)",
    "sklearn": "scikit-learn's _compute_mi_cd: points strictly inside the radius, the point "
               "itself included",
}


def cmi_strata(runs, panel: Panel, source="runs"):
    """The (task, backbone) strata of a standard run table (a data frame, or the path of a
    validated Parquet run table, read in batches); refuses one run per cell."""
    information = _module("analyses.information")
    if isinstance(runs, pd.DataFrame):
        frameworks = runs["framework"].nunique()
        strata = None
    else:
        strata = information.read_cmi_strata(runs, panel.tasks, panel.languages, panel.backbones)
        frameworks = len(strata.frameworks)
    if frameworks < 2:
        raise shape.one_run_per_cell_error(source, ["information"])
    return strata or information.cmi_strata(runs, panel.tasks, panel.languages, panel.backbones)


def cmi_null_shard(strata, convention: str, shard: int, *, k: int = 2, permutations: int = 500,
                   shards: int = 4, seed: int = 407) -> pd.DataFrame:
    """One shard of the permutation null (convention, shard, draw, statistic), seeded from
    ``(seed, shard)``: the null depends on seed, permutations and shards only."""
    information = _module("analyses.information")
    size = information.shard_sizes(permutations, shards)[shard]
    draws = information.cmi_null(strata.scores, strata.labels, k, convention, size,
                                 information.shard_seeds(seed, shards)[shard])
    return pd.DataFrame({"convention": convention, "shard": shard, "draw": range(size),
                         "statistic": draws})


@api_messages
@_run_table_doc
def cmi_test(runs: pd.DataFrame, *, k: int = 2, permutations: int = 500, shards: int = 4,
             seed: int = 407, conventions=("protocol", "sklearn"),
             null: pd.DataFrame | None = None,
             task: str = "task", language: str = "language", backbone: str = "backbone",
             score: str = "score", framework: str = "framework", languages=None, backbones=None,
             score_range=None, missing: str = "error", source="runs") -> CMI:
    """``I(score; language | task, backbone)``: mean over strata of the Ross (2014) k-NN estimate.

    Debiased = observed - null (CBC paper, section 6; docs/methods.md section 6). Needs repeated
    runs (frameworks) per cell.

    Parameters
    ----------
    runs : pandas.DataFrame
        One row per judge run.
    k : int, default 2
        The nearest neighbour of the estimator.
    permutations : int, default 500
        Within-stratum shuffles of the language labels in the null.
    shards : int, default 4
        Independent streams the null is drawn in, as the workflow's shard jobs do.
    seed : int, default 407
        Seed each shard's seed is spawned from.
    conventions : sequence of {"protocol", "sklearn"}
        Tie conventions reported (:data:`CMI_CONVENTIONS`).
    null : pandas.DataFrame, optional
        Null draws already computed (convention, shard, draw, statistic).
    {run_table}

    Returns
    -------
    CMI
        The summary per convention, the null draws and the estimate of every stratum.
    """
    checked, panel = RunSpec.from_kwargs(**locals()).prepare(runs)
    return cmi_test_strata(cmi_strata(checked, panel, source), k=k, permutations=permutations,
                           shards=shards, seed=seed, conventions=conventions, null=null)


def cmi_test_strata(strata, *, k: int = 2, permutations: int = 500, shards: int = 4,
                    seed: int = 407, conventions=("protocol", "sklearn"),
                    null: pd.DataFrame | None = None) -> CMI:
    """:func:`cmi_test` of strata already arranged (:func:`cmi_strata`)."""
    if null is None:
        null = pd.concat([cmi_null_shard(strata, convention, shard, k=k,
                                         permutations=permutations, shards=shards, seed=seed)
                          for convention in conventions for shard in range(shards)],
                         ignore_index=True)
    null = null.sort_values(["convention", "shard", "draw"], kind="stable", ignore_index=True)
    information = _module("analyses.information")
    per_stratum = strata.strata_frame()
    summary = {"statistic": "mean over (task, backbone) strata of the Ross (2014) estimate of "
                            "I(score; language), nats",
               "k": k, "n_permutations": permutations, "n_shards": shards, "seed": seed,
               "n_strata": len(strata.scores), "points_per_stratum": strata.scores.shape[1]}
    for convention in conventions:
        observed = information.ross_mi(strata.scores, strata.labels, k, convention)
        draws = null.loc[null["convention"] == convention, "statistic"].to_numpy()
        test = information.cmi_test(observed, draws)
        summary[convention] = {"convention": CMI_CONVENTIONS[convention],
                               **dataclasses.asdict(test)}
        per_stratum[convention] = observed
    return CMI(summary=summary, null=null, strata=per_stratum)


# --- Judge-LS ------------------------------------------------------------------------------------

@api_messages
def judge_ls(verdicts: pd.DataFrame, *, reference: str = "en", conditions=None,
             on_duplicate: str = "error", confidence: float = 0.95,
             columns: Mapping[str, str] | None = None,
             reference_texts: pd.DataFrame | None = None,
             variant_texts: Mapping[str, tuple] | None = None, audit=None,
             truth: Mapping | None = None, title: str = "Judge-LS summary",
             source="verdicts") -> JudgeLS:
    """Judge-LS: accuracy, verdict flips against ``reference``, position and tie-probe tables.

    Verdicts are mapped back to original output indices and compared across conditions on the
    same item and order, with Wilson intervals and exact McNemar tests (Judge-LS paper,
    arXiv 2606.14278; docs/methods.md section 8).

    Parameters
    ----------
    verdicts : pandas.DataFrame
        One row per judgment: item, subset, judge, condition, order, verdict, gold.
    reference : str, default "en"
        The condition flips are counted against.
    conditions : sequence of str, optional
        The conditions to keep, in order (default: all).
    on_duplicate : {"error", "drop_first"}, default "error"
        What a repeated judgment does (:func:`polyjudge.analyses.judge_ls.validate_verdicts`).
    confidence : float, default 0.95
        Level of the Wilson intervals.
    columns : mapping of str to str, optional
        Standard name -> your column.
    reference_texts : pandas.DataFrame, optional
        The reference texts the variants are audited against.
    variant_texts : mapping, optional
        Condition -> (texts, ``full`` | ``code_switched``).
    audit : AuditThresholds or mapping, optional
        An :class:`~polyjudge.analyses.judge_ls.AuditThresholds` or its fields.
    truth : mapping, optional
        Planted values, for the recovery table.
    title : str, default "Judge-LS summary"
        Title of the Markdown summary.
    source : str, default "verdicts"
        What error messages call the table.

    Returns
    -------
    JudgeLS
        The tables, the Markdown summary and the judgment counts.
    """
    jl = _module("analyses.judge_ls")
    frame = io.rename_columns(verdicts, dict(columns or {}))
    checked = jl.validate_verdicts(frame, source, conditions, on_duplicate)
    choices = jl.normalise_choices(checked)
    tables = {
        "accuracy": jl.accuracy_table(choices, by_order=True, confidence=confidence),
        "flips": jl.flip_table(choices, reference, confidence),
        "position": jl.position_table(choices, confidence),
        "tie_probe": jl.tie_probe_table(choices, confidence),
    }
    if not isinstance(audit, jl.AuditThresholds):
        audit = jl.AuditThresholds(**(audit or {}))
    audited = jl.audit_variants(reference_texts, dict(variant_texts or {}), audit)
    flagged = audited.loc[audited["flagged"].astype(bool), ["item", "subset"]]
    sensitivity = jl.flip_sensitivity(choices, flagged, reference, confidence)
    recovered = (jl.recovery_table(tables, truth) if truth
                 else pd.DataFrame(columns=jl.RECOVERY_COLUMNS))
    summary = jl.summary_markdown(tables["accuracy"], tables["flips"], tables["position"],
                                  tables["tie_probe"], sensitivity, audited, title=title)
    return JudgeLS(**tables, audit=audited, sensitivity=sensitivity, recovery=recovered,
                   summary=summary, n_judgments=len(choices),
                   n_invalid=int((~choices["valid"]).sum()), choices=choices)
