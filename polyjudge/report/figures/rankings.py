"""Figures of rankings, held-out tau, reversal (docs/methods.md sections 2 and 4)."""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from .style import (
    OKABE_ITO,
    SPREAD_LABEL,
    interval_dots,
    new_figure,
    pivot_in_order,
    require_columns,
    series_style,
    styled,
)


@styled
def ranking_bump_chart(rankings: pd.DataFrame, title: str | None = None) -> Figure:
    """Rank of each backbone within each language, raw (left) vs CBC-calibrated (right).

    ``rankings``: columns language, backbone, rank_raw, rank_cbc (``cbc/rankings.csv``; rank 1 =
    highest mean score in that language). CBC-calibrated means ``M - beta`` are additive, so their
    ranking is the same in every language: flat lines on the right; crossings on the left are rank
    reversals (CBC paper, section 5).
    """
    require_columns(rankings, ["language", "backbone", "rank_raw", "rank_cbc"],
                    "ranking_bump_chart")
    languages = list(pd.unique(rankings["language"]))
    n_backbones = rankings["backbone"].nunique()
    fig = new_figure(7.2, 4.3)
    axes = fig.subplots(1, 2, sharey=True)
    for ax, column, name in zip(axes, ("rank_raw", "rank_cbc"), ("raw scores", "CBC-calibrated")):
        ranks = pivot_in_order(rankings, "backbone", "language", column, "ranking_bump_chart")
        for index, (backbone, row) in enumerate(ranks.iterrows()):
            ax.plot(range(len(languages)), row.to_numpy(float), label=backbone, linewidth=2,
                    markersize=6, **series_style(index))
        ax.set_xticks(range(len(languages)), languages, rotation=30, ha="right",
                      rotation_mode="anchor")
        ax.set_title(name)
        ax.set_xlabel("prompt language")
        ax.xaxis.grid(False)
    axes[0].set_yticks(range(1, n_backbones + 1))
    axes[0].set_ylim(n_backbones + 0.4, 0.6)
    axes[0].set_ylabel("rank within language (1 = best)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(n_backbones, 3),
               title="judge backbone")
    fig.suptitle(title or "Per-language backbone rankings: raw vs CBC")
    return fig


@styled
def heldout_tau_forest(tau: pd.DataFrame, published: dict | None = None,
                       title: str | None = None) -> Figure:
    """Held-out Kendall tau per method: mean and replicate spread, sorted by mean (best on top).

    ``tau``: columns method, mean, spread_low, spread_high (``heldout/tau.csv``: mean and
    2.5/97.5 percentiles over task bootstraps of the mean tau-b across language pairs;
    docs/methods.md section 2, paper Table 2). The spread is drawn as a line and printed as
    "replicates low to high", never in brackets: it is not a confidence interval (no bootstrap
    interval of the held-out tau covers at its level: docs/methods.md section 2).
    ``published``: optional method -> published mean, drawn as hollow diamonds (methods absent
    from ``tau`` are ignored); the legend says "reproduced mean" only when some are drawn, else
    "mean" (a user's own panel). The value and spread are printed at
    the right; a method without a mean is listed with its ``reason`` (tau.csv), else "not
    available".
    """
    require_columns(tau, ["method", "mean", "spread_low", "spread_high"], "heldout_tau_forest")
    data = tau.sort_values("mean", kind="stable", na_position="first").reset_index(drop=True)
    y = np.arange(len(data))
    fig = new_figure(7.2, 1.4 + 0.3 * len(data))
    ax = fig.add_subplot()
    ax.axvline(0, color="0.4", linewidth=0.8)
    known = data["method"].map(published or {}).astype(float)
    compared = bool(np.isfinite(known).any())  # "reproduced" only beside published values
    interval_dots(ax, y, data["mean"], data["spread_low"], data["spread_high"],
                   label=f"{'reproduced mean' if compared else 'mean'}, {SPREAD_LABEL}",
                   **series_style(0))
    if compared:
        ax.plot(known, y, linestyle="none", marker="D", markersize=7, markerfacecolor="none",
                markeredgecolor=OKABE_ITO[3], markeredgewidth=1.4, label="published mean")
    for row in data.itertuples():
        spread = np.isfinite(row.spread_low) and np.isfinite(row.spread_high)
        reason = getattr(row, "reason", "")  # tau.csv's reason (read back: NaN when empty)
        reason = reason if isinstance(reason, str) and reason else "not available"
        reason = reason if len(reason) <= 60 else reason[:57] + "..."
        text = (reason if not np.isfinite(row.mean) else f"{row.mean:.3f}"
                + (f"; replicates {row.spread_low:.3f} to {row.spread_high:.3f}"
                   if spread else ""))
        ax.annotate(text, xy=(1.02, row.Index), xycoords=("axes fraction", "data"), va="center",
                    fontsize=8, annotation_clip=False)
    ax.set_yticks(y, data["method"])
    ax.set_ylim(-0.6, len(data) - 0.4)
    ax.yaxis.grid(False)
    ax.set_xlabel("held-out Kendall τ-b (mean over language pairs)")
    ax.legend(loc="lower right")
    ax.set_title(title or "Held-out cross-task rank consistency by method")
    return fig


@styled
def reversal_strength(pairs: pd.DataFrame, units: str = "score points²", fdr: float | None = None,
                      title: str | None = None) -> Figure:
    """Reversal strength ``delta = max(0, -d(a) d(b))`` per backbone pair, sorted, by significance.

    ``pairs``: columns backbone_i, backbone_j, witness_a, witness_b, delta, q_value, reversed,
    significant (``reversal/pairs.csv``; docs/methods.md section 4). Bars are coloured by
    ``significant`` (BH q <= ``fdr``, the level named in the legend: ``reversal/summary.json``'s
    fdr); the labels give the witness languages (a / b) of reversed pairs, and the bar ends the
    q-value. The title (``title``, or a default) is followed by the counts of reversing pairs.
    """
    require_columns(pairs, ["backbone_i", "backbone_j", "witness_a", "witness_b", "delta",
                            "q_value", "reversed", "significant"], "reversal_strength")
    data = pairs.sort_values("delta", kind="stable").reset_index(drop=True)
    reversed_, significant = data["reversed"].astype(bool), data["significant"].astype(bool)
    labels = [f"{row.backbone_i} vs {row.backbone_j}\n"
              + (f"({row.witness_a} / {row.witness_b})" if flag else "(no reversal)")
              for row, flag in zip(data.itertuples(), reversed_)]
    colors = {True: OKABE_ITO[0], False: OKABE_ITO[1]}
    fig = new_figure(7.2, 1.2 + 0.36 * len(data))
    ax = fig.add_subplot()
    y = np.arange(len(data))
    ax.barh(y, data["delta"], color=[colors[flag] for flag in significant], height=0.7)
    top = float(data["delta"].max())
    for position, (delta, q, flag) in enumerate(zip(data["delta"], data["q_value"], reversed_)):
        if flag:
            ax.text(delta + 0.01 * top, position, f"q = {q:.1e}", va="center", fontsize=7)
    ax.set_xlim(0, 1.2 * top if top > 0 else 1)
    ax.set_yticks(y, labels, fontsize=7)
    ax.set_ylim(-0.6, len(data) - 0.4)
    ax.yaxis.grid(False)
    ax.set_xlabel(f"reversal strength δ = −d(a)·d(b) ({units})")
    level = f"{fdr:g}" if fdr is not None else "FDR"
    names = {True: f"significant (BH q ≤ {level})", False: "not significant"}
    ax.legend(handles=[Patch(color=colors[flag], label=names[flag]) for flag in (True, False)
                       if (significant == flag).any()], loc="lower right")  # present ones only
    n_reversed, n_significant = int(reversed_.sum()), int((reversed_ & significant).sum())
    ax.set_title(f"{title or 'Rank reversal strength per backbone pair'}\n{n_reversed} of "
                 f"{len(data)} pairs reverse, {n_significant} significantly"
                 + (f" (BH FDR {fdr:g})" if fdr is not None else ""))
    return fig
