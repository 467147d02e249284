"""Shared look of every figure: colours, markers, rcParams, byte-stable saving and the small
helpers the figure modules use (column checks, ordered pivots, interval dots)."""
from __future__ import annotations

import functools

import matplotlib
import pandas as pd
from matplotlib.figure import Figure

from ..palette import OKABE_ITO  # noqa: F401  (the figure modules import it from here)

DPI = 200
"""Resolution of the PNG files (pixels per inch). Figure sizes are multiples of 1/8 in (exact in
binary), so a PNG is exactly ``figsize x DPI`` pixels: 7.25 in wide is 1450 px."""

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
DIVERGING_CMAP = "RdBu_r"

STYLE = {
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "figure.titlesize": 11,
    "legend.fontsize": 8,
    "legend.title_fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "0.88",
    "grid.linewidth": 0.6,
    "axes.axisbelow": True,
    "legend.frameon": False,
    "image.cmap": DIVERGING_CMAP,
    "svg.fonttype": "path",
    "svg.hashsalt": "polyjudge-figures",
    "savefig.dpi": DPI,
    "savefig.facecolor": "white",
}
"""rcParams used while a figure is built and while it is saved (never set globally)."""

RADIUS_FILL = "0.86"
INTERVAL_LABEL = "95% interval"
SPREAD_LABEL = "replicate spread (2.5-97.5%), not a confidence interval"
"""The legend of a range of bootstrap replicates that is not a confidence interval (the
held-out tau's: docs/methods.md section 2)."""


def styled(function):
    """Build the figure under :data:`STYLE` (a context, so global rcParams are untouched), then
    compute its constrained layout once and fix it: constrained layout starts from the current
    positions, so every further draw would move things slightly and change the saved bytes."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        with matplotlib.rc_context(STYLE):
            fig = function(*args, **kwargs)
            fig.draw_without_rendering()
            # no engine at all (not "none", a placeholder): savefig then skips its extra
            # layout pass, one whole dry draw per file, for the same output
            fig.set_layout_engine(None)
        return fig
    return wrapper


def save_figure(fig: Figure, png_path, svg_path, dpi: int = DPI) -> None:
    """Write ``fig`` as PNG (``dpi`` pixels per inch, size = figsize x dpi) and SVG.

    Byte-stable: the same figure gives identical files. PNG without the "Software" tag (which
    carries the matplotlib version), SVG without the date and with ids salted by
    ``svg.hashsalt``; text in the SVG is drawn as paths, so it needs no fonts to display.
    """
    with matplotlib.rc_context(STYLE):
        fig.savefig(png_path, format="png", dpi=dpi, metadata={"Software": None})
        fig.savefig(svg_path, format="svg", dpi=dpi, metadata={"Date": None, "Creator": None})



def require_columns(frame: pd.DataFrame, columns, what: str) -> None:
    """Raise a readable ValueError if ``frame`` is empty or lacks one of ``columns``."""
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"{what}: expected a pandas DataFrame, got {type(frame).__name__}")
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise ValueError(f"{what}: missing column(s) {missing}; "
                         f"the table has {list(frame.columns)}")
    if frame.empty:
        raise ValueError(f"{what}: the table has no rows")


def only_subset_all(frame: pd.DataFrame, what: str) -> pd.DataFrame:
    """Rows with ``subset == "all"`` (the pooled Judge-LS rows)."""
    rows = frame[frame["subset"] == "all"]
    if rows.empty:
        raise ValueError(f"{what}: no rows with subset == 'all'; subsets present: "
                         f"{list(pd.unique(frame['subset']))}")
    return rows


def pivot_in_order(frame: pd.DataFrame, index: str, columns: str, values: str,
                   what: str) -> pd.DataFrame:
    """Wide table with rows and columns in order of first appearance."""
    duplicated = frame.duplicated([index, columns])
    if duplicated.any():
        first = frame.loc[duplicated, [index, columns]].iloc[0].tolist()
        raise ValueError(f"{what}: more than one row for ({index}, {columns}) = {first}")
    wide = frame.pivot(index=index, columns=columns, values=values)
    return wide.reindex(index=pd.unique(frame[index]), columns=pd.unique(frame[columns]))


def series_style(index: int) -> dict:
    """Colour and marker of the ``index``-th series."""
    return {"color": OKABE_ITO[index % len(OKABE_ITO)], "marker": MARKERS[index % len(MARKERS)]}


def new_figure(width: float, height: float) -> Figure:
    """A constrained-layout figure, its size rounded to 1/8 in (whole pixels at :data:`DPI`)."""
    return Figure(figsize=(round(width * 8) / 8, round(height * 8) / 8), layout="constrained")


@styled
def not_drawn(title: str, reason: str) -> Figure:
    """A figure in place of one whose analysis did not run on the panel: its title and why
    (the panel's shape did not allow it), so every figure file exists and none looks drawn."""
    import textwrap

    fig = new_figure(6, 1.5)
    ax = fig.add_subplot()
    ax.set_axis_off()
    ax.set_title(title)
    ax.text(0.5, 0.5, "Not drawn: " + textwrap.fill(reason, 90), ha="center", va="center",
            transform=ax.transAxes, wrap=False)
    return fig


def interval_dots(ax, y, value, low, high, label=None, **style) -> None:
    """Point estimates at ``(value, y)`` with horizontal intervals ``[low, high]``."""
    color = style.pop("color")
    ax.hlines(y, low, high, color=color, linewidth=1.4, alpha=0.8)
    ax.plot(value, y, linestyle="none", color=color, markersize=5, **style)
    if label is not None:  # legend entry showing both the point and the interval
        ax.plot([], [], color=color, linewidth=1.4, markersize=5, label=label, **style)


TITLES = {
    "interaction_heatmap": "Language x backbone interaction β",
    "ranking_bump_chart": "Backbone ranks per language, raw vs CBC",
    "band_vs_radius": "Interaction β: simultaneous bootstrap band vs union-bound radius",
    "heldout_tau": "Held-out cross-task rank consistency",
    "reversal_strength": "Rank reversal strength per backbone pair",
    "cmi_null": "I(score; language | backbone, task): permutation null vs observed",
    "task_count_curve": "Task-count ablation",
    "backbone_subsets": "Backbone-subset ablation",
    "lolo": "Leave-one-language-out: raw vs zero-shot CBC",
    "deletion_mae": "Interaction on incomplete panels",
    "judge_ls_flips": "Judge-LS: verdict flips per judge and condition",
    "judge_ls_position": "Judge-LS: position inconsistency per judge and condition",
    "applied_ranks": "Ranks with the applied calibrator",
    "new_judge": "Adding a judge: its ranks, and the base judges' beta",
}
"""The title of each report figure, by its name in the workflow: the workflow adds the panel
(``title (panel)``), the ``plot()`` methods of :mod:`polyjudge.api` use it as it is."""
