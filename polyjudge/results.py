"""The results of the public functions of :mod:`polyjudge.api`: frozen, with tidy DataFrames
and, where the workflow draws a figure, ``plot()`` returning that figure (titled as the
workflow's, :data:`polyjudge.report.figures.TITLES`; matplotlib is imported only then)."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .data.panel import Panel

__all__ = ["Calibration", "Heldout", "Reversal", "CMI", "JudgeLS"]


@dataclass(frozen=True)
class Calibration:
    """CBC on one run table (the workflow's ``cbc/`` outputs).

    Attributes
    ----------
    beta, beta_weighted : pandas.DataFrame
        language, backbone, beta (plain and CBC-Weighted).
    rankings : pandas.DataFrame
        language, backbone, mean_raw, mean_cbc, rank_raw, rank_cbc (1 = best in the language).
    calibrated : pandas.DataFrame
        The calibrated task-level scores ``T - beta`` (task, language, backbone, score, n_runs).
    summary : dict
        Sizes, the estimator used, both sigmas and radii, R^2 (``cbc/summary.json``).
    panel : Panel
        The task-level panel the estimate was computed from.
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
                                               title=figures.TITLES[figure])
        if figure == "ranking_bump_chart":
            return figures.ranking_bump_chart(self.rankings, title=figures.TITLES[figure])
        raise ValueError(f"unknown figure {figure!r}; one of interaction_heatmap, "
                         "ranking_bump_chart")


@dataclass(frozen=True)
class Heldout:
    """Held-out cross-task rank consistency (the workflow's ``heldout/`` outputs).

    Attributes
    ----------
    tau : pandas.DataFrame
        method, mean, spread_low, spread_high, full_fit, n_replicates, reason (Table 2;
        spread: the 2.5 / 97.5 percentiles of the replicates, not a confidence interval;
        reason: why a method has no value, "" where it has one).
    replicates : pandas.DataFrame
        replicate, method, tau.
    paired : pandas.DataFrame
        Every method against ``reference`` over the same replicates.
    skipped : tuple of str
        Requested methods the data cannot support (e.g. Dawid-Skene without binary verdicts).
    """

    tau: pd.DataFrame
    replicates: pd.DataFrame
    paired: pd.DataFrame
    skipped: tuple[str, ...]

    def plot(self, published: dict | None = None):
        """Forest plot of mean held-out tau and its interval per method (``heldout_tau``)."""
        from .report import figures
        return figures.heldout_tau_forest(self.tau, published, title=figures.TITLES["heldout_tau"])


@dataclass(frozen=True)
class Reversal:
    """Rank reversal (the workflow's ``reversal/`` outputs).

    Attributes
    ----------
    pairs : pandas.DataFrame
        One row per backbone pair (witness languages, delta, IUT p, BH q, significant).
    summary : dict
        Counts, the top backbone per language and the global count test
        (``reversal/summary.json``).
    """

    pairs: pd.DataFrame
    summary: dict

    def plot(self, units: str = "score points²"):
        """Reversal strength delta per backbone pair (``reversal_strength``)."""
        from .report import figures
        return figures.reversal_strength(self.pairs, units,
                                         title=figures.TITLES["reversal_strength"])


@dataclass(frozen=True)
class CMI:
    """The CMI test (the workflow's ``information/`` outputs).

    Attributes
    ----------
    summary : dict
        Settings and, per tie convention, observed, null mean, debiased value, band and p-value
        (``information/cmi.json``).
    null : pandas.DataFrame
        convention, shard, draw, statistic.
    strata : pandas.DataFrame
        task, backbone and the estimate of every stratum per convention.
    """

    summary: dict
    null: pd.DataFrame
    strata: pd.DataFrame

    def plot(self):
        """Permutation null against the observed statistic per convention (``cmi_null``)."""
        from .report import figures
        return figures.cmi_null_histogram(self.null, self.summary,
                                          title=figures.TITLES["cmi_null"])


@dataclass(frozen=True)
class JudgeLS:
    """The Judge-LS tables (the workflow's ``judge_ls/`` outputs).

    Attributes
    ----------
    accuracy, flips, position, tie_probe, audit, sensitivity, recovery : pandas.DataFrame
        Accuracy; verdict changes against the reference condition (McNemar); order
        inconsistency; the tie probe; the translation audit of the variant texts; flips
        without the flagged items; planted values against estimates (when a truth is given).
    summary : str
        The Markdown summary.
    n_judgments, n_invalid : int
        Judgments, and unparseable verdicts (counted in every table).
    choices : pandas.DataFrame or None
        Every judgment with its ``choice`` in original output indices (``1``, ``2``, ``Tie``)
        and ``valid`` (the judge card reads it).
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
    choices: pd.DataFrame | None = None

    TABLES = ("accuracy", "flips", "position", "tie_probe", "audit", "sensitivity", "recovery")

    def tables(self) -> dict[str, pd.DataFrame]:
        """Name -> table, in the workflow's order (``judge_ls/<name>.csv``)."""
        return {name: getattr(self, name) for name in self.TABLES}

    def plot(self, figure: str = "flips"):
        """``flips`` (flip rate per judge and condition) or ``position`` (order inconsistency)."""
        from .report import figures
        if figure == "flips":
            return figures.judge_ls_flips(self.flips, title=figures.TITLES["judge_ls_flips"])
        if figure == "position":
            return figures.judge_ls_position(self.position,
                                            title=figures.TITLES["judge_ls_position"])
        raise ValueError(f"unknown figure {figure!r}; one of flips, position")
