"""Figure of a collection stopped at a precision target (docs/methods.md 10.7): width and
decisions against the money spent, one point per round."""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from .style import new_figure, require_columns, series_style, styled


@styled
def stopping_curve(stopping: pd.DataFrame, title: str | None = None) -> Figure:
    """Widest beta half-width of the confidence sequence (left) and undecided backbone pairs
    (right) after each round, against the cumulative cost (USD); the stopping round is ringed.

    ``stopping``: columns round, items, cost_usd, max_beta_halfwidth, undecided_pairs, stop
    (``collect/stopping.csv``).
    """
    require_columns(stopping, ["round", "items", "cost_usd", "max_beta_halfwidth",
                               "undecided_pairs", "stop"], "stopping_curve")
    fig = new_figure(7.25, 3.0)
    left, right = fig.subplots(1, 2)
    cost = stopping["cost_usd"].to_numpy(float)
    stopped = stopping["stop"].astype(bool).to_numpy()
    for ax, column, label, index in (
            (left, "max_beta_halfwidth", "widest β half-width (score units)", 0),
            (right, "undecided_pairs", "undecided backbone pairs", 1)):
        values = stopping[column].to_numpy(float)
        values = np.where(np.isfinite(values), values, np.nan)
        ax.plot(cost, values, **series_style(index))
        if index == 0:
            _no_interval_yet(ax, cost, values, stopping.get("target_beta_halfwidth"))
        if stopped.any():
            ax.scatter(cost[stopped], values[stopped], s=120, facecolors="none",
                       edgecolors="0.2", linewidths=1.2, label="stopped", zorder=3)
        if ax.get_legend_handles_labels()[1]:
            ax.legend(loc="upper right")
        ax.set_xlabel("cost so far (USD)")
        ax.set_ylabel(label)
        if index:
            ax.set_ylim(bottom=0)
    right.yaxis.set_major_locator(MaxNLocator(integer=True))
    right.set_ylim(0, max(1.0, float(stopping["undecided_pairs"].max())) * 1.1)
    last = stopping.iloc[-1]
    fig.suptitle(title or "Stopping a collection at a precision")
    right.set_title(f"{int(last['items'])} items after {int(last['round'])} rounds",
                    fontsize="small")
    return fig


def _no_interval_yet(ax, cost, halfwidths, target) -> None:
    """The target half-width as a dashed line, and each round with no interval yet (an
    infinite half-width) as an open triangle at the top, labelled, never a point at infinity."""
    finite = halfwidths[np.isfinite(halfwidths)]
    goal = pd.to_numeric(target, errors="coerce").dropna() if target is not None else []
    top = max([*finite, *goal, 0.0]) * 1.25 or 1.0
    if len(goal):
        ax.axhline(float(goal.iloc[0]), color="0.4", linestyle="--", linewidth=1,
                   label="target")
    missing = ~np.isfinite(halfwidths)
    if missing.any():
        ax.scatter(cost[missing], np.full(missing.sum(), top), marker="^", s=60,
                   facecolors="none", edgecolors="0.3", label="no interval yet", zorder=3)
        ax.annotate("no interval yet", (cost[missing][0], top), xytext=(4, -12),
                    textcoords="offset points", fontsize="small", color="0.3")
    ax.set_ylim(0, top * 1.08)
