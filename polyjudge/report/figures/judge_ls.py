"""Figures of Judge-LS (docs/methods.md section 8)."""
from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from .style import (
    INTERVAL_LABEL,
    interval_dots,
    new_figure,
    only_subset_all,
    require_columns,
    series_style,
    styled,
)


@styled
def judge_ls_flips(flips: pd.DataFrame, title: str | None = None) -> Figure:
    """Flip rate per judge and target condition, pooled subsets, item-clustered 95% intervals.

    ``flips``: columns judge, reference, target, subset, flip_rate, flip_ci_low, flip_ci_high
    (``judge_ls/flips.csv``; only ``subset == "all"`` is drawn). A flip is a verdict that changes
    between the reference and the target condition. Grouped dot plot: one row per target, judges
    dodged within the row (colour and marker per judge).
    """
    require_columns(flips, ["judge", "reference", "target", "subset", "flip_rate", "flip_ci_low",
                     "flip_ci_high"], "judge_ls_flips")
    data = only_subset_all(flips, "judge_ls_flips")
    references = list(pd.unique(data["reference"]))
    rows = data["target"] if len(references) == 1 else data["reference"] + " → " + data["target"]
    data = data.assign(row=rows)
    categories = list(pd.unique(data["row"]))
    judges = list(pd.unique(data["judge"]))
    width = 0.8 / len(judges)
    fig = new_figure(7.2, 1.6 + 0.07 * len(categories) * max(len(judges), 3))
    ax = fig.add_subplot()
    position = data["row"].map({name: i for i, name in enumerate(categories)}).to_numpy(float)
    for index, judge in enumerate(judges):
        keep = (data["judge"] == judge).to_numpy()
        offset = (index - (len(judges) - 1) / 2) * width
        interval_dots(ax, position[keep] + offset, data["flip_rate"][keep],
                       data["flip_ci_low"][keep], data["flip_ci_high"][keep], label=judge,
                       **series_style(index))
    for boundary in range(1, len(categories)):
        ax.axhline(boundary - 0.5, color="0.85", linewidth=0.6)
    ax.set_yticks(range(len(categories)), categories)
    ax.set_ylim(len(categories) - 0.5, -0.5)
    ax.yaxis.grid(False)
    ax.set_xlim(left=0)
    reference = references[0] if len(references) == 1 else "the reference"
    ax.set_xlabel(f"flip rate vs {reference} (share of pairs whose verdict changes; "
                  f"item-clustered Wilson {INTERVAL_LABEL})")
    ax.set_ylabel("target condition")
    fig.legend(loc="outside right upper", title="judge")
    ax.set_title(title or "Judge-LS: verdict flips per judge and condition")
    return fig


@styled
def judge_ls_position(position: pd.DataFrame, title: str | None = None) -> Figure:
    """Position inconsistency per judge and condition, pooled subsets, with Wilson 95% intervals.

    ``position``: columns judge, condition, subset, position_inconsistency, position_ci_low,
    position_ci_high (``judge_ls/position.csv``; only ``subset == "all"``): the share of pairs
    whose verdict changes when the two responses swap places. Small multiples, one panel per
    judge (shared axes, conditions in order of first appearance; a condition a judge was not run
    on is an empty row).
    """
    require_columns(position, ["judge", "condition", "subset", "position_inconsistency",
                        "position_ci_low", "position_ci_high"], "judge_ls_position")
    data = only_subset_all(position, "judge_ls_position")
    judges = list(pd.unique(data["judge"]))
    conditions = list(pd.unique(data["condition"]))
    n_cols = min(3, len(judges))
    n_rows = -(-len(judges) // n_cols)
    fig = new_figure(max(6.0, 1.6 + 2.0 * n_cols), 1.2 + n_rows * (0.5 + 0.19 * len(conditions)))
    axes = fig.subplots(n_rows, n_cols, sharex=True, sharey=True, squeeze=False).ravel()
    order = {name: i for i, name in enumerate(conditions)}
    for ax, judge in zip(axes, judges):
        rows = data[data["judge"] == judge]
        interval_dots(ax, rows["condition"].map(order), rows["position_inconsistency"],
                       rows["position_ci_low"], rows["position_ci_high"], **series_style(0))
        ax.set_title(judge)
        ax.yaxis.grid(False)
    for ax in axes[len(judges):]:
        ax.set_visible(False)
    axes[0].set_yticks(range(len(conditions)), conditions)
    axes[0].set_ylim(len(conditions) - 0.5, -0.5)
    axes[0].set_xlim(-0.03, 1.0)
    fig.supxlabel("position inconsistency: share of pairs whose verdict changes\nwhen the two "
                  f"responses swap places (Wilson {INTERVAL_LABEL})", fontsize=9)
    fig.supylabel("prompting condition", fontsize=9)
    fig.suptitle(title or "Judge-LS: position inconsistency per judge and condition")
    return fig
