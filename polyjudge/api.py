"""The stable public API: each analysis of the workflow in one call on a pandas table.

A run table is long: one row per judge run, with task, language, backbone, score and optionally
framework (repeated runs of a cell; none means one run per cell) columns, named by the keyword
arguments. Every function validates it exactly as the workflow's ingest step does
(:func:`polyjudge.data.io.validate_runs`, :func:`polyjudge.data.io.build_panel`), so bad input raises the
same :class:`~polyjudge.data.errors.InputError` message, naming ``source`` instead of the file. The rule
scripts call these functions too, so a notebook and the workflow compute the same numbers.

Each function returns a frozen result with tidy DataFrames and, where the workflow draws a
figure, ``plot()`` returning that figure (:mod:`polyjudge.report.figures`; matplotlib is imported only
then). The names in :data:`polyjudge.__all__` are stable.
"""
from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .data import io, shape
from .data.errors import InputError, api_messages
from .data.panel import Panel

__all__ = ["Calibration", "Heldout", "Reversal", "CMI", "JudgeLS", "calibrate", "heldout",
           "reversal", "cmi_test", "judge_ls", "prepare_runs"]


def _module(name: str):
    """An analysis module, imported on first use (keeps ``import polyjudge`` light)."""
    return importlib.import_module(f"polyjudge.{name}")


# --- run table -> task-level panel ---------------------------------------------------------------

@api_messages
def prepare_runs(runs: pd.DataFrame, *, task: str = "task", language: str = "language",
                 backbone: str = "backbone", score: str = "score", framework: str = "framework",
                 languages=None, backbones=None, score_range=None, missing: str = "error",
                 source="runs") -> tuple[pd.DataFrame, Panel]:
    """Validate a run table and average its runs over frameworks into the panel ``T[t, l, b]``.

    The workflow's ingest step (docs/methods.md section 0): columns renamed to the standard names,
    checked (:func:`polyjudge.data.io.validate_runs`: keys, numeric scores in ``score_range``, NaN
    scores an error unless ``missing="omit"``), then averaged per task x language x backbone cell
    (:func:`polyjudge.data.io.build_panel`; missing cells allowed only with ``missing="omit"``).
    ``languages`` / ``backbones`` fix the axis order (default: natural sort). Returns the
    standard run table and the :class:`~polyjudge.data.panel.Panel`.
    """
    if not isinstance(runs, pd.DataFrame):
        raise TypeError(f"runs must be a pandas DataFrame, got {type(runs).__name__}")
    columns = {"task": task, "language": language, "backbone": backbone, "score": score,
               "framework": framework}
    checked = io.validate_runs(io.rename_columns(runs, columns), source, score_range, missing,
                               mapping=columns)
    panel = io.build_panel(checked, source, languages, backbones,
                           allow_missing_cells=missing == "omit")
    return checked, panel


# --- CBC ------------------------------------------------------------------------------------------

SIGMA_DEFINITIONS = {
    "sigma_total": "population SD (ddof 0) of all task-level scores (the paper's protocol)",
    "sigma_residual": "population SD of the residuals of task + language + backbone + "
                      "language x backbone fitted to the task-level scores",
}
R2_MODELS = {
    "r2_two_way": "run score ~ task + backbone + language + framework + backbone:language",
    "r2_full": "the two-way model + task:language",
}


@dataclass(frozen=True)
class Calibration:
    """CBC on one run table (the workflow's ``cbc/`` outputs).

    ``beta`` and ``beta_weighted``: language, backbone, beta; ``rankings``: language, backbone,
    mean_raw, mean_cbc, rank_raw, rank_cbc (1 = best within the language); ``calibrated``: the
    calibrated task-level scores ``T - beta`` (task, language, backbone, score, n_runs);
    ``summary``: sizes, the estimator used, both sigmas and radii, R^2 (``cbc/summary.json``);
    ``panel``: the task-level panel the estimate was computed from.
    """

    beta: pd.DataFrame
    beta_weighted: pd.DataFrame
    rankings: pd.DataFrame
    calibrated: pd.DataFrame
    summary: dict
    panel: Panel

    @property
    def estimator(self) -> str:
        """``plain`` (complete panel) or the incomplete-panel estimator, e.g. ``least_squares``."""
        return self.summary["estimator"]

    @property
    def radius_total(self) -> float:
        """Finite-sample radius with the total SD of the scores (the paper's "about 10")."""
        return self.summary["radius_total"]

    @property
    def radius_residual(self) -> float:
        """Finite-sample radius with the residual SD of the additive two-way model."""
        return self.summary["radius_residual"]

    @property
    def r2_two_way(self) -> float:
        return self.summary["r2_two_way"]

    @property
    def r2_full(self) -> float:
        return self.summary["r2_full"]

    def plot(self, figure: str = "interaction_heatmap", units: str = "score points"):
        """``interaction_heatmap`` (beta) or ``ranking_bump_chart`` (ranks raw vs CBC)."""
        from .report import figures
        if figure == "interaction_heatmap":
            return figures.interaction_heatmap(self.beta, units,
                                               title="Language x backbone interaction β")
        if figure == "ranking_bump_chart":
            return figures.ranking_bump_chart(self.rankings,
                                              title="Backbone ranks per language, raw vs CBC")
        raise ValueError(f"unknown figure {figure!r}; one of interaction_heatmap, "
                         "ranking_bump_chart")


@api_messages
def calibrate(runs: pd.DataFrame, *, task: str = "task", language: str = "language",
              backbone: str = "backbone", score: str = "score", framework: str = "framework",
              languages=None, backbones=None, score_range=None, missing: str = "error",
              estimator: str | None = None, eps: float = 0.05, source="runs") -> Calibration:
    """CBC: ``beta[l, b] = M[l, b] - M[., b] - M[l, .] + M[., .]`` of the cell means, ``T - beta``.

    CBC paper, section 3; docs/methods.md section 1 (radius: the finite-sample proposition, at level
    ``eps``). On an incomplete panel (``missing="omit"``) beta is estimated by least squares
    unless ``estimator`` names another of :data:`polyjudge.analyses.missing.METHODS`;
    ``summary["estimator"]`` says which. R^2 is that of the run-level one-hot OLS models of
    ``summary["r2_models"]``. Column and validation arguments: :func:`prepare_runs`.
    """
    checked, panel = prepare_runs(runs, task=task, language=language, backbone=backbone,
                                  score=score, framework=framework, languages=languages,
                                  backbones=backbones, score_range=score_range, missing=missing,
                                  source=source)
    shape.require_two_way(panel, source)  # before the R^2 fits, which need two of each too
    estimator_module = _module("cbc.estimator")
    r2 = (estimator_module.ols_r_squared(checked, estimator_module.TWO_WAY_TERMS),
          estimator_module.ols_r_squared(checked, estimator_module.FULL_TERMS))
    return calibrate_panel(panel, n_runs=len(checked), r2=r2, estimator=estimator, eps=eps,
                           source=source)


def calibrate_panel(panel: Panel, *, n_runs: int, r2: tuple[float, float],
                    estimator: str | None = None, eps: float = 0.05,
                    source="panel") -> Calibration:
    """:func:`calibrate` on a task-level panel whose run count and run-level R^2 (two-way,
    full) are known: the workflow's cbc step, with both from the streamed ingest
    (:mod:`polyjudge.data.streaming`, ``inputs.json``), so the runs are not read again.
    A panel of one language or one backbone, or with a language x backbone cell without any
    task, stops naming them (:mod:`polyjudge.data.shape`)."""
    shape.require_two_way(panel, source)
    shape.require_pairs(panel, source)
    estimator_module, missing_module = _module("cbc.estimator"), _module("analyses.missing")
    estimate = missing_module.estimate_beta(panel.values, estimator)
    result = estimator_module.cbc_result(estimate.cell_means, estimate.beta)
    calibrated = Panel(estimator_module.cbc_calibrate(panel.values, result.beta), panel.tasks,
                       panel.languages, panel.backbones, panel.strata, panel.n_runs)
    n, k, m = panel.shape
    sigma_total = float(np.nanstd(panel.values))
    sigma_residual = estimator_module.residual_sd(panel.values)
    max_beta = float(np.abs(result.beta).max())
    radius = lambda sigma: estimator_module.finite_sample_radius(sigma, n, k, m, eps)
    summary = {
        "n_tasks": n, "n_languages": k, "n_backbones": m, "n_runs": n_runs,
        "complete": panel.is_complete,
        "estimator": estimate.method,
        "estimator_note": estimate.note,
        "sigma_total": sigma_total,
        "sigma_residual": sigma_residual,
        "radius_total": radius(sigma_total),
        "radius_residual": radius(sigma_residual),
        "eps": eps,
        "sigma_definitions": dict(SIGMA_DEFINITIONS),
        "max_abs_beta": max_beta,
        "tasks_for_radius_below_half_max_beta": estimator_module.tasks_for_radius(
            sigma_total, max_beta / 2, k, m, eps),
        "r2_two_way": r2[0],
        "r2_full": r2[1],
        "r2_models": dict(R2_MODELS),
        "same_order_after_cbc": bool((result.rank_cbc == result.rank_cbc[0]).all()),
        "order_after_cbc": [panel.backbones[i] for i in np.argsort(result.rank_cbc[0])],
    }
    return Calibration(beta=panel.matrix_frame(result.beta, "beta"),
                       beta_weighted=panel.matrix_frame(result.beta_weighted, "beta"),
                       rankings=estimator_module.rankings_frame(panel, result),
                       calibrated=calibrated.to_frame(), summary=summary, panel=panel)


# --- held-out tau (Table 2) -----------------------------------------------------------------------

@dataclass(frozen=True)
class Heldout:
    """Held-out cross-task rank consistency (the workflow's ``heldout/`` outputs).

    ``tau``: method, mean, ci_low, ci_high, full_fit, n_replicates, reason (Table 2; reason:
    why a method has no value, "" where it has one); ``replicates``: replicate, method, tau;
    ``paired``: every method against ``reference`` over the same replicates; ``skipped``:
    requested methods the data cannot support (e.g. Dawid-Skene without binary verdicts).
    """

    tau: pd.DataFrame
    replicates: pd.DataFrame
    paired: pd.DataFrame
    skipped: tuple[str, ...]

    def plot(self, published: dict | None = None):
        """Forest plot of mean held-out tau and its interval per method (``heldout_tau``)."""
        from .report import figures
        return figures.heldout_tau_forest(self.tau, published,
                                          title="Held-out cross-task rank consistency")


@api_messages
def heldout(runs: pd.DataFrame, *, methods=None, replicates: int = 1000, seed: int = 7,
            reference: str = "CBC", requirements: pd.DataFrame | None = None,
            run_verdicts: bool = True, verdict_threshold: float = 100.0, task: str = "task",
            language: str = "language", backbone: str = "backbone", score: str = "score",
            framework: str = "framework",
            languages=None, backbones=None, score_range=None, missing: str = "error",
            source="runs") -> Heldout:
    """Table 2: each method fitted on the in-bag tasks of a task bootstrap, scored out of bag.

    Score of a replicate: mean pairwise Kendall tau-b across languages of the backbone order the
    method gives on the out-of-bag cell means (CBC paper, section 5; docs/methods.md section 2; the
    protocol's stream ``default_rng(seed)``). ``methods``: names of
    :data:`polyjudge.analyses.baselines.METHODS` (None: all). Dawid-Skene uses run verdicts
    ``score >= verdict_threshold`` (default 100, the protocol's "run score 100" on a 0-100
    pass-rate scale; ``run_verdicts=False`` for scores that are not pass rates) and, for its
    requirement variant, ``requirements`` (task, language, backbone, framework, requirement_id,
    satisfied; renamed with the same column arguments). A method that cannot run on the panel,
    or whose tau is undefined in every replicate, keeps its row in ``tau`` with NaN values and
    its ``reason`` (logged; listed in ``skipped`` when it could not run).
    """
    checked, panel = prepare_runs(runs, task=task, language=language, backbone=backbone,
                                  score=score, framework=framework, languages=languages,
                                  backbones=backbones, score_range=score_range, missing=missing,
                                  source=source)
    shape.require_two_way(panel, source, "held-out rank consistency")
    data = ({"runs": _module("analyses.baselines").run_items(checked, panel, verdict_threshold)}
            if run_verdicts else {})
    if requirements is not None:
        table = io.rename_columns(requirements, {"task": task, "language": language,
                                                 "backbone": backbone, "framework": framework})
        io.runs_from_requirements(table, "requirements")  # validates keys and 0/1 verdicts
        data["requirements"] = io.with_single_framework(table)
    methods = None if methods is None else list(methods)
    tau, table, paired, skipped = _module("analyses.heldout").heldout_tables(
        panel, methods, replicates, seed, reference, **data)
    return Heldout(tau=tau, replicates=table, paired=paired, skipped=skipped)


# --- rank reversal -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Reversal:
    """Rank reversal (the workflow's ``reversal/`` outputs).

    ``pairs``: one row per backbone pair (witness languages, delta, IUT p, BH q, significant);
    ``summary``: counts, the top backbone per language and the global count test
    (``reversal/summary.json``).
    """

    pairs: pd.DataFrame
    summary: dict

    def plot(self, units: str = "score points²"):
        """Reversal strength delta per backbone pair (``reversal_strength``)."""
        from .report import figures
        return figures.reversal_strength(self.pairs, units)


@api_messages
def reversal(runs: pd.DataFrame, *, fdr: float = 0.05, permutations: int = 999, seed: int = 507,
             task: str = "task", language: str = "language", backbone: str = "backbone",
             score: str = "score", framework: str = "framework", languages=None, backbones=None,
             score_range=None, missing: str = "error", source="runs") -> Reversal:
    """Backbone pairs whose order reverses between two languages, tested per pair and globally.

    Gap ``d(l) = M[l, i] - M[l, j]``; witnesses ``(a, b) = argmin d(a) d(b)``; strength
    ``delta = max(0, -d(a) d(b))``; intersection-union p of two one-sided task t-tests,
    Benjamini-Hochberg q at ``fdr``; the global test compares the reversal count with
    ``permutations`` within-(task, backbone) residual permutations of the additive fit (CBC
    paper, sections 3.2 and 5; docs/methods.md section 4).
    """
    _, panel = prepare_runs(runs, task=task, language=language, backbone=backbone, score=score,
                            framework=framework, languages=languages, backbones=backbones,
                            score_range=score_range, missing=missing, source=source)
    shape.require_two_way(panel, source, "rank reversal")
    module = _module("analyses.reversal")
    pairs = module.rank_reversal(panel, fdr)
    test = module.reversal_count_test(panel, permutations, seed)
    summary = module.reversal_summary(pairs, module.top_backbone_per_language(panel), test, fdr)
    summary["seed"] = seed
    return Reversal(pairs=pairs, summary=summary)


# --- conditional mutual information ---------------------------------------------------------------

CMI_CONVENTIONS = {
    "protocol": "neighbours within the k-th-neighbour radius counted inclusively, the point "
                "itself excluded, floored at 1 (the published protocol)",
    "sklearn": "scikit-learn's _compute_mi_cd: points strictly inside the radius, the point "
               "itself included",
}


@dataclass(frozen=True)
class CMI:
    """The CMI test (the workflow's ``information/`` outputs).

    ``summary``: settings and, per tie convention, observed, null mean, debiased value, band and
    p-value (``information/cmi.json``); ``null``: convention, shard, draw, statistic;
    ``strata``: task, backbone and the estimate of every stratum per convention.
    """

    summary: dict
    null: pd.DataFrame
    strata: pd.DataFrame

    def plot(self):
        """Permutation null against the observed statistic per convention (``cmi_null``)."""
        from .report import figures
        return figures.cmi_null_histogram(self.null, self.summary)


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
        raise InputError(source, "one run per task x language x backbone cell",
                            "repeated runs (frameworks) in every cell for the CMI test")
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
def cmi_test(runs: pd.DataFrame, *, k: int = 2, permutations: int = 500, shards: int = 4,
             seed: int = 407, conventions=("protocol", "sklearn"), null: pd.DataFrame | None = None,
             task: str = "task", language: str = "language", backbone: str = "backbone",
             score: str = "score", framework: str = "framework", languages=None, backbones=None,
             score_range=None, missing: str = "error", source="runs") -> CMI:
    """``I(score; language | task, backbone)``: mean over strata of the Ross (2014) k-NN estimate.

    Tested against ``permutations`` within-stratum shuffles of the language labels (drawn in
    ``shards`` independent streams, as the workflow's shard jobs do; ``null`` passes draws
    already computed); debiased = observed - null (CBC paper, section 6; docs/methods.md section 6).
    Needs repeated runs (frameworks) per cell.
    """
    checked, panel = prepare_runs(runs, task=task, language=language, backbone=backbone,
                                  score=score, framework=framework, languages=languages,
                                  backbones=backbones, score_range=score_range, missing=missing,
                                  source=source)
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

@dataclass(frozen=True)
class JudgeLS:
    """The Judge-LS tables (the workflow's ``judge_ls/`` outputs).

    ``accuracy``, ``flips`` (verdict changes against the reference condition, McNemar),
    ``position`` (order inconsistency), ``tie_probe``, ``audit`` (translation audit of the
    variant texts), ``sensitivity`` (flips without the flagged items), ``recovery`` (planted
    values against estimates, when a truth is given); ``summary``: the Markdown summary;
    ``n_judgments`` and ``n_invalid`` (unparseable verdicts, counted in every table).
    """

    accuracy: pd.DataFrame
    flips: pd.DataFrame
    position: pd.DataFrame
    tie_probe: pd.DataFrame
    audit: pd.DataFrame
    sensitivity: pd.DataFrame
    recovery: pd.DataFrame
    summary: str
    n_judgments: int
    n_invalid: int

    TABLES = ("accuracy", "flips", "position", "tie_probe", "audit", "sensitivity", "recovery")

    def tables(self) -> dict[str, pd.DataFrame]:
        """Name -> table, in the workflow's order (``judge_ls/<name>.csv``)."""
        return {name: getattr(self, name) for name in self.TABLES}

    def plot(self, figure: str = "flips"):
        """``flips`` (flip rate per judge and condition) or ``position`` (order inconsistency)."""
        from .report import figures
        if figure == "flips":
            return figures.judge_ls_flips(self.flips)
        if figure == "position":
            return figures.judge_ls_position(self.position)
        raise ValueError(f"unknown figure {figure!r}; one of flips, position")


@api_messages
def judge_ls(verdicts: pd.DataFrame, *, reference: str = "en", conditions=None,
             on_duplicate: str = "error", confidence: float = 0.95,
             columns: Mapping[str, str] | None = None,
             reference_texts: pd.DataFrame | None = None,
             variant_texts: Mapping[str, tuple] | None = None, audit=None,
             truth: Mapping | None = None, title: str = "Judge-LS summary",
             source="verdicts") -> JudgeLS:
    """Judge-LS: accuracy, verdict flips against ``reference``, position and tie-probe tables.

    One row per judgment (item, subset, judge, condition, order, verdict, gold; ``columns`` maps
    standard name -> your column); verdicts are mapped back to original output indices and
    compared across conditions on the same item and order, with Wilson intervals and exact
    McNemar tests (Judge-LS paper, arXiv 2606.14278; docs/methods.md section 8). ``variant_texts``:
    condition -> (texts, ``full`` | ``code_switched``) audited against ``reference_texts``
    with ``audit`` thresholds (an :class:`~polyjudge.analyses.judge_ls.AuditThresholds` or its fields).
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
                   n_invalid=int((~choices["valid"]).sum()))
