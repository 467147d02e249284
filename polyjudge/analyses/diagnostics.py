"""Diagnostics of the CBC model: is the two-way model adequate (the three-way interaction test)?

CBC (paper, section 3; docs/methods.md 10.3) models the task-level score as additive in task
effects plus the language x backbone interaction ``beta`` and cannot tell a task x language x
backbone effect ``delta(t,l,b)`` from it or from noise. Where a cell has repeats (devai: three
frameworks judged identical workspaces), :func:`three_way_anova` tests ``delta`` against the
within-cell variance. The simultaneous band for beta is
:func:`polyjudge.cbc.band.bootstrap_band`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data import io
from ..data.errors import InputError

ANOVA_TERMS = ("task", "language", "backbone", "task:language", "task:backbone",
               "language:backbone", "task:language:backbone")


@dataclass(frozen=True)
class ReplicateArray:
    """Run scores ``values[t, l, b, f]`` of a balanced panel with repeats, with their labels."""

    values: np.ndarray
    tasks: tuple[str, ...]
    languages: tuple[str, ...]
    backbones: tuple[str, ...]
    frameworks: tuple[str, ...]


def replicate_array(runs, languages=None, backbones=None, source="runs") -> ReplicateArray:
    """The ``(n, k, m, F)`` array of a run table (standard columns); every run must exist.

    Tasks and frameworks in natural order, languages and backbones in the given order. ``runs``
    is a data frame, or the path of a validated Parquet run table (the workflow's
    ``runs.parquet``), then read in batches straight into the array (8 bytes per run).
    """
    wanted = {"task": None, "language": languages, "backbone": backbones, "framework": None}
    if isinstance(runs, pd.DataFrame):
        present = {axis: runs[axis].astype(str).unique() for axis in wanted}
    else:
        from ..data.streaming import arrays
        present = arrays.first_appearance(runs, list(wanted))
    labels = {axis: io.order_labels(present[axis], wanted[axis], axis, source) for axis in wanted}
    if isinstance(runs, pd.DataFrame):
        codes = [pd.Categorical(runs[axis].astype(str), categories=labels[axis]).codes
                 for axis in labels]
        values = np.full(tuple(len(v) for v in labels.values()), np.nan)
        values[tuple(codes)] = runs["score"].to_numpy(float)
    else:
        values = arrays.dense_scores(runs, labels)[0]
    absent = int((~np.isfinite(values)).sum())
    if absent:
        raise InputError(source, f"{absent} of {values.size} task x language x backbone x "
                            "framework runs are missing", "a balanced panel (every run present) "
                            "for the ANOVA with replication")
    return ReplicateArray(values, *labels.values())


@dataclass(frozen=True)
class ThreeWayAnova:
    """ANOVA with replication of ``R[t, l, b, f]`` (all terms fixed, tested against residual).

    ``table``: term, ss, df, ms, f, p (rows: the seven terms of :data:`ANOVA_TERMS`, residual,
    total). ``three_way_share``: SS of task x language x backbone over total SS.
    ``three_way_variance``: its variance component ``max(0, (MS_tlb - MS_res) / F)``;
    ``interaction_variance``: the language x backbone component with tasks random,
    ``max(0, (MS_lb - MS_tlb) / (n F))``, and ``interaction_f`` / ``interaction_p``: beta tested
    against the three-way term (the right error term when tasks are a sample). ``adequate``: the
    two-way model is adequate iff the three-way term is not significant at ``alpha`` against the
    within-cell variance; ``criterion`` says so in words.
    """

    table: pd.DataFrame
    three_way_share: float
    three_way_variance: float
    interaction_variance: float
    interaction_f: float
    interaction_p: float
    alpha: float
    adequate: bool
    criterion: str

    def to_dict(self) -> dict:
        """JSON-ready summary (the table as a list of records)."""
        return {"table": self.table.to_dict(orient="records"),
                **{name: getattr(self, name) for name in (
                    "three_way_share", "three_way_variance", "interaction_variance",
                    "interaction_f", "interaction_p", "alpha", "adequate", "criterion")}}


def three_way_anova(runs: np.ndarray, alpha: float = 0.05) -> ThreeWayAnova:
    """Three-way ANOVA with replication of a balanced ``(n, k, m, F)`` run array, ``F >= 2``.

    Effects are the usual balanced projections (``x_tl.. - x_t... - x_.l.. + x_....`` and so on),
    ``SS = sum of squared effects over all runs``; degrees of freedom ``n-1``, ..., three-way
    ``(n-1)(k-1)(m-1)``, residual ``n k m (F-1)``; every term's ``F = MS / MS_residual``
    (docs/methods.md 10.3).
    """
    import scipy.stats  # here, not at the top: the band step never needs it (~0.5 s)

    runs = np.asarray(runs, dtype=float)
    if runs.ndim != 4 or min(runs.shape[:3]) < 2 or runs.shape[3] < 2:
        raise ValueError("three_way_anova needs a (tasks, languages, backbones, repeats) array "
                         "with at least 2 levels per factor and 2 repeats, got shape "
                         f"{runs.shape}")
    if not np.isfinite(runs).all():
        raise ValueError("three_way_anova needs a balanced panel: every run finite")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    n, k, m, reps = runs.shape
    mean = lambda axes: runs.mean(axis=axes, keepdims=True)
    grand = mean((0, 1, 2, 3))
    t, l, b = (mean(axes) - grand for axes in ((1, 2, 3), (0, 2, 3), (0, 1, 3)))
    tl = mean((2, 3)) - t - l - grand
    tb = mean((1, 3)) - t - b - grand
    lb = mean((0, 3)) - l - b - grand
    cell = mean(3)
    tlb = cell - tl - tb - lb - t - l - b - grand
    effects = (t, l, b, tl, tb, lb, tlb)
    ss = [float((effect ** 2).sum() * runs.size / effect.size) for effect in effects]
    df = [n - 1, k - 1, m - 1, (n - 1) * (k - 1), (n - 1) * (m - 1), (k - 1) * (m - 1),
          (n - 1) * (k - 1) * (m - 1)]
    ss_res, df_res = float(((runs - cell) ** 2).sum()), n * k * m * (reps - 1)
    ms_res = ss_res / df_res
    ms = np.array(ss) / np.array(df)
    f = ms / ms_res
    table = pd.DataFrame({"term": list(ANOVA_TERMS), "ss": ss, "df": df, "ms": ms, "f": f,
                          "p": scipy.stats.f.sf(f, df, df_res)})
    ss_total = float(((runs - grand) ** 2).sum())
    table.loc[len(table)] = ["residual", ss_res, df_res, ms_res, np.nan, np.nan]
    table.loc[len(table)] = ["total", ss_total, runs.size - 1, np.nan, np.nan, np.nan]
    ms_tlb, ms_lb = ms[6], ms[5]
    interaction_f = float(ms_lb / ms_tlb)
    p_three_way = float(table["p"].iloc[6])
    adequate = p_three_way >= alpha
    criterion = (f"two-way model adequate iff the task x language x backbone interaction is not "
                 f"significant against the within-cell variance at alpha = {alpha} "
                 f"(F = {f[6]:.3f} on {df[6]} and {df_res} df, p = {p_three_way:.3g})")
    return ThreeWayAnova(
        table=table, three_way_share=ss[6] / ss_total,
        three_way_variance=max(0.0, float((ms_tlb - ms_res) / reps)),
        interaction_variance=max(0.0, float((ms_lb - ms_tlb) / (n * reps))),
        interaction_f=interaction_f,
        interaction_p=float(scipy.stats.f.sf(interaction_f, df[5], df[6])),
        alpha=alpha, adequate=adequate, criterion=criterion)
