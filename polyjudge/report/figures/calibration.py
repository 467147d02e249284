"""Figures of a calibration carried to new scores: a calibrator applied to another panel
(``applied/rankings.csv``) and judges added to a panel (``extend/``); docs/methods.md section 10.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure

from .style import (
    DIVERGING_CMAP,
    INTERVAL_LABEL,
    new_figure,
    pivot_in_order,
    require_columns,
    series_style,
    styled,
)

UNCALIBRATED = "0.55"


@styled
def applied_ranks(rankings: pd.DataFrame, title: str | None = None) -> Figure:
    """Rank of each backbone in each language on new scores: raw (hollow) and after the applied
    calibrator (filled, with its interval), one panel per language.

    ``rankings``: columns language, backbone, rank_raw, rank_cbc, rank_low, rank_high, p_first
    and optionally calibrated (``applied/rankings.csv``, from :meth:`polyjudge.Calibrator.rank`;
    rank 1 = highest mean). Pairs the calibrator was not fitted on (``calibrated`` False, kept
    with ``unseen: raw``) are grey. The share of replicates ranking first is printed at the right.
    """
    columns = ["language", "backbone", "rank_raw", "rank_cbc", "rank_low", "rank_high", "p_first"]
    require_columns(rankings, columns, "applied_ranks")
    data = rankings.copy()
    if "calibrated" not in data:
        data["calibrated"] = True
    languages = list(pd.unique(data["language"]))
    backbones = list(pd.unique(data["backbone"]))
    n_cols = min(4, len(languages))
    n_rows = math.ceil(len(languages) / n_cols)
    fig = new_figure(7.25, 0.9 + n_rows * (0.55 + 0.24 * len(backbones)))
    axes = np.atleast_1d(fig.subplots(n_rows, n_cols, sharex=True, sharey=True, squeeze=False))
    column = len(backbones) + 0.85  # where the share ranking first is printed
    for ax, language in zip(axes.ravel(), languages):
        rows = data[data["language"] == language].set_index("backbone")
        for y, backbone in enumerate(backbones):
            if backbone not in rows.index:
                continue
            row = rows.loc[backbone]
            color = series_style(0)["color"] if row["calibrated"] else UNCALIBRATED
            ax.hlines(y, row["rank_low"], row["rank_high"], color=color, linewidth=1.6, alpha=0.8)
            ax.plot(row["rank_cbc"], y, "o", color=color, markersize=5)
            ax.plot(row["rank_raw"], y, "o", markerfacecolor="none", markeredgecolor="0.2",
                    markersize=6)
            ax.text(column, y, f"{row['p_first']:.2f}", ha="center", va="center", fontsize=7,
                    color="0.3")
        ax.text(column, -0.75, "P(1st)", ha="center", va="bottom", fontsize=7, color="0.3")
        ax.axvline(len(backbones) + 0.5, color="0.75", linewidth=0.6)
        ax.set_title(language)
        ax.yaxis.grid(False)
    for ax in axes.ravel()[len(languages):]:
        ax.set_visible(False)
    first = axes[0, 0]
    first.set_yticks(range(len(backbones)), backbones)
    first.set_ylim(len(backbones) - 0.5, -0.5)
    first.set_xlim(0.5, len(backbones) + 1.3)
    first.set_xticks(range(1, len(backbones) + 1))
    for ax in axes[-1]:
        ax.set_xlabel("rank (1 = best)")
    first.plot([], [], "o", markerfacecolor="none", markeredgecolor="0.2", label="raw rank")
    first.plot([], [], "o-", color=series_style(0)["color"],
               label=f"calibrated rank, {INTERVAL_LABEL}")
    if not data["calibrated"].all():
        first.plot([], [], "o-", color=UNCALIBRATED, label="not calibrated (unseen: raw)")
    handles, labels = first.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels))
    fig.suptitle(title or "Ranks on new scores: raw vs the applied calibrator")
    return fig


@styled
def new_judge(ranks: pd.DataFrame, shift: pd.DataFrame, summary: dict | None = None,
              title: str | None = None) -> Figure:
    """Left: the added judge's rank in each language, raw and after CBC on the combined panel,
    with task-bootstrap intervals. Right: how far each base judge's beta moved when the judges
    were added (combined minus base panel), per cell.

    ``ranks``: columns language, backbone, rank_raw, rank_raw_low, rank_raw_high, rank_cbc,
    rank_cbc_low, rank_cbc_high (``extend/new_judge.csv``); ``shift``: columns language,
    backbone, shift (``extend/beta_shift.csv``); ``summary``: ``extend/summary.json``
    (``n_backbones_base`` sets the rank axis, ``max_abs_shift`` the right panel's title).
    """
    require_columns(ranks, ["language", "backbone", "rank_raw", "rank_raw_low", "rank_raw_high",
                            "rank_cbc", "rank_cbc_low", "rank_cbc_high"], "new_judge")
    require_columns(shift, ["language", "backbone", "shift"], "new_judge")
    languages = list(pd.unique(ranks["language"]))
    added = list(pd.unique(ranks["backbone"]))
    fig = new_figure(7.25, 3.9)
    left, right = fig.subplots(1, 2, width_ratios=[1.1, 1])
    x = np.arange(len(languages))
    width = 0.7 / (2 * len(added))
    for index, backbone in enumerate(added):
        rows = ranks[ranks["backbone"] == backbone].set_index("language").loc[languages]
        for k, (kind, hollow) in enumerate((("raw", True), ("cbc", False))):
            offset = (2 * index + k - (2 * len(added) - 1) / 2) * width
            style = series_style(index)
            color = style["color"]
            left.vlines(x + offset, rows[f"rank_{kind}_low"], rows[f"rank_{kind}_high"],
                        color=color, linewidth=1.4, alpha=0.8)
            left.plot(x + offset, rows[f"rank_{kind}"], linestyle="none", marker=style["marker"],
                      color=color, markersize=6, markerfacecolor="none" if hollow else color,
                      label=f"{backbone}: {'raw' if hollow else 'CBC'}")
    n_ranks = int((summary or {}).get("n_backbones_base", ranks["rank_raw_high"].max() - 1)) + 1
    left.set_ylim(n_ranks + 0.5, 0.5)
    left.set_yticks(range(1, n_ranks + 1))
    left.set_xticks(x, languages, rotation=30, ha="right", rotation_mode="anchor")
    left.xaxis.grid(False)
    left.set_ylabel("rank within language (1 = best)")
    left.set_title(f"added judge's rank, {INTERVAL_LABEL}")
    left.legend(loc="lower left", fontsize=7)
    wide = pivot_in_order(shift, "language", "backbone", "shift", "new_judge")
    limit = max(float(np.nanmax(np.abs(wide.to_numpy()))), 1e-9)
    image = right.imshow(wide.to_numpy(float), cmap=DIVERGING_CMAP, aspect="auto",
                         norm=TwoSlopeNorm(0.0, -limit, limit))
    for (i, j), value in np.ndenumerate(wide.to_numpy(float)):
        right.text(j, i, f"{value:+.2f}", ha="center", va="center", fontsize=6.5)
    right.set_xticks(range(wide.shape[1]), wide.columns, rotation=30, ha="right",
                     rotation_mode="anchor")
    right.set_yticks(range(wide.shape[0]), wide.index)
    right.grid(False)
    largest = (summary or {}).get("max_abs_shift", limit)
    right.set_title(f"beta shift of the base judges (max |shift| {largest:.2f})")
    fig.colorbar(image, ax=right, shrink=0.8, label="beta combined - beta base")
    fig.suptitle(title or "Adding a judge: its ranks, and the base judges' beta")
    return fig
