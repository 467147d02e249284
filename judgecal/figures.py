"""Figures of the reproduction report (issue 8): one function per figure, each returning a Figure.

Every function takes the tidy table(s) a workflow step writes (the columns are listed in its
docstring; the section of docs/methods.md / the CBC paper it illustrates is named there too),
validates the columns it needs, and returns a :class:`matplotlib.figure.Figure` built without
pyplot: no global figure state is created, so nothing needs closing and nothing leaks between
calls. The layout is computed when the figure is built and then fixed (so saving is byte-stable);
after changing a returned figure, call ``fig.set_layout_engine("constrained")`` to re-run it.
Categories (languages, backbones, methods, conditions) keep their order of first appearance in the
table unless a docstring says otherwise.

Style: Okabe & Ito (2008) colour-blind-safe colours, each series also has its own marker; the
diverging map is ColorBrewer RdBu centred at 0; the font is the DejaVu Sans shipped with
matplotlib, so the output does not depend on the fonts installed. :func:`save_figure` writes PNG
and SVG byte-stably (fixed dpi, no timestamp or software tag, fixed SVG id salt).
"""
from __future__ import annotations

import functools

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator, NullLocator

DPI = 200
"""Resolution of the PNG files (pixels per inch). Figure sizes are multiples of 1/8 in (exact in
binary), so a PNG is exactly ``figsize x DPI`` pixels: 7.25 in wide is 1450 px."""

OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000",
             "#F0E442")
"""Okabe-Ito colours, most distinct first (yellow last: weak on white)."""
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
    "svg.hashsalt": "judgecal-figures",
    "savefig.dpi": DPI,
    "savefig.facecolor": "white",
}
"""rcParams used while a figure is built and while it is saved (never set globally)."""

RADIUS_FILL = "0.86"
INTERVAL_LABEL = "95% interval"


def _styled(function):
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


# --- helpers -------------------------------------------------------------------------------------
def _require(frame: pd.DataFrame, columns, what: str) -> None:
    """Raise a readable ValueError if ``frame`` is empty or lacks one of ``columns``."""
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"{what}: expected a pandas DataFrame, got {type(frame).__name__}")
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise ValueError(f"{what}: missing column(s) {missing}; "
                         f"the table has {list(frame.columns)}")
    if frame.empty:
        raise ValueError(f"{what}: the table has no rows")


def _only_subset_all(frame: pd.DataFrame, what: str) -> pd.DataFrame:
    """Rows with ``subset == "all"`` (the pooled Judge-LS rows)."""
    rows = frame[frame["subset"] == "all"]
    if rows.empty:
        raise ValueError(f"{what}: no rows with subset == 'all'; subsets present: "
                         f"{list(pd.unique(frame['subset']))}")
    return rows


def _pivot(frame: pd.DataFrame, index: str, columns: str, values: str, what: str) -> pd.DataFrame:
    """Wide table with rows and columns in order of first appearance."""
    duplicated = frame.duplicated([index, columns])
    if duplicated.any():
        first = frame.loc[duplicated, [index, columns]].iloc[0].tolist()
        raise ValueError(f"{what}: more than one row for ({index}, {columns}) = {first}")
    wide = frame.pivot(index=index, columns=columns, values=values)
    return wide.reindex(index=pd.unique(frame[index]), columns=pd.unique(frame[columns]))


def _style_of(index: int) -> dict:
    """Colour and marker of the ``index``-th series."""
    return {"color": OKABE_ITO[index % len(OKABE_ITO)], "marker": MARKERS[index % len(MARKERS)]}


def _figure(width: float, height: float) -> Figure:
    """A constrained-layout figure, its size rounded to 1/8 in (whole pixels at :data:`DPI`)."""
    return Figure(figsize=(round(width * 8) / 8, round(height * 8) / 8), layout="constrained")


def _interval_dots(ax, y, value, low, high, label=None, **style) -> None:
    """Point estimates at ``(value, y)`` with horizontal intervals ``[low, high]``."""
    color = style.pop("color")
    ax.hlines(y, low, high, color=color, linewidth=1.4, alpha=0.8)
    ax.plot(value, y, linestyle="none", color=color, markersize=5, **style)
    if label is not None:  # legend entry showing both the point and the interval
        ax.plot([], [], color=color, linewidth=1.4, markersize=5, label=label, **style)


# --- CBC estimator and bands (docs/methods.md section 1) ------------------------------------------
@_styled
def interaction_heatmap(beta: pd.DataFrame, units: str = "score points",
                        decimals: int | None = None, title: str | None = None) -> Figure:
    """Language x backbone heatmap of the CBC interaction (CBC paper, section 3).

    ``beta``: columns language, backbone, beta (``results/{panel}/cbc/beta.csv``), where
    ``beta = M - row means - column means + grand mean`` of the cell-mean matrix M. Diverging
    colours centred at 0 (symmetric limits), each cell annotated with its value; ``decimals``
    None gives 1 decimal when max |beta| >= 1, else 2.
    """
    _require(beta, ["language", "backbone", "beta"], "interaction_heatmap")
    grid = _pivot(beta, "language", "backbone", "beta", "interaction_heatmap")
    values = grid.to_numpy(float)
    limit = float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 1.0
    limit = limit if limit > 0 else 1.0
    decimals = (1 if limit >= 1 else 2) if decimals is None else decimals
    n_rows, n_cols = grid.shape
    fig = _figure(1.9 + 0.9 * n_cols, 1.3 + 0.4 * n_rows)
    ax = fig.add_subplot()
    image = ax.imshow(values, cmap=DIVERGING_CMAP, vmin=-limit, vmax=limit, aspect="auto")
    for (row, col), value in np.ndenumerate(values):
        if np.isfinite(value):  # "+ 0.0" turns a rounded -0.0 into 0.0
            ax.text(col, row, f"{round(value, decimals) + 0.0:.{decimals}f}", ha="center",
                    va="center", fontsize=8, color="white" if abs(value) > 0.6 * limit else "black")
    ax.set_xticks(range(n_cols), grid.columns, rotation=30, ha="right", rotation_mode="anchor")
    ax.set_yticks(range(n_rows), grid.index)
    ax.grid(False)
    ax.spines[:].set_visible(False)
    ax.set_xlabel("judge backbone")
    ax.set_ylabel("prompt language")
    fig.colorbar(image, ax=ax, label=f"interaction β ({units})", shrink=0.9)
    ax.set_title(title or "Language × backbone interaction β (CBC)")
    return fig


@_styled
def band_vs_radius(bands: pd.DataFrame, summary: dict, units: str = "score points",
                   title: str | None = None) -> Figure:
    """Each beta cell with its simultaneous bootstrap band, beside the two union-bound radii.

    ``bands``: columns language, backbone, beta, band_low, band_high (``cbc/bands.csv``);
    ``summary``: ``cbc/bands.json`` with radius_total_sd and radius_residual_sd (the Gaussian
    union-bound radius ``sigma sqrt(2 (1-1/m)(1-1/k) ln(2mk/eps) / n)`` with the total-SD and
    the residual-SD sigma; docs/methods.md section 1), optional level and critical_value. The radii
    are drawn around 0 (shaded: residual SD, dashed: total SD): a cell outside them differs from
    0 by the union bound. Filled markers: the band excludes 0. Cells are grouped by language.
    """
    _require(bands, ["language", "backbone", "beta", "band_low", "band_high"], "band_vs_radius")
    missing = [key for key in ("radius_total_sd", "radius_residual_sd") if key not in summary]
    if missing:
        raise ValueError(f"band_vs_radius: summary lacks {missing}; keys: {list(summary)}")
    languages = list(pd.unique(bands["language"]))
    backbones = list(pd.unique(bands["backbone"]))
    width = len(backbones) + 1
    x = (bands["language"].map({name: i for i, name in enumerate(languages)}) * width
         + bands["backbone"].map({name: i for i, name in enumerate(backbones)})).to_numpy()
    excludes = ((bands["band_low"] > 0) | (bands["band_high"] < 0)).to_numpy()

    fig = _figure(7.2, 4.4)
    ax = fig.add_subplot()
    residual, total = float(summary["radius_residual_sd"]), float(summary["radius_total_sd"])
    ax.axhspan(-residual, residual, color=RADIUS_FILL, linewidth=0, zorder=0)
    for sign in (-1, 1):
        ax.axhline(sign * total, color="black", linestyle="--", linewidth=1)
    ax.axhline(0, color="0.4", linewidth=0.8)
    backbone_handles = []
    for index, backbone in enumerate(backbones):
        style = _style_of(index)
        rows = (bands["backbone"] == backbone).to_numpy()
        ax.vlines(x[rows], bands["band_low"][rows], bands["band_high"][rows], color=style["color"],
                  linewidth=1.6)
        for filled in (True, False):
            keep = rows & (excludes == filled)
            ax.plot(x[keep], bands["beta"][keep], linestyle="none", marker=style["marker"],
                    color=style["color"], markerfacecolor=style["color"] if filled else "white",
                    markersize=5)
        backbone_handles.append(Line2D([], [], linestyle="-", **style, label=backbone))
    for boundary in range(1, len(languages)):
        ax.axvline(boundary * width - 1, color="0.75", linewidth=0.6)
    ax.set_xticks([i * width + (len(backbones) - 1) / 2 for i in range(len(languages))], languages)
    ax.xaxis.grid(False)
    ax.set_xlim(-1, len(languages) * width - 1)
    ax.set_xlabel("prompt language (one interval per backbone)")
    ax.set_ylabel(f"interaction β ({units})")
    level = summary.get("level", 0.95)
    critical = summary.get("critical_value")
    band_label = f"β ± simultaneous {level:.0%} band" + (f" (critical value {critical:.2f})"
                                                         if critical is not None else "")
    key = [
        Line2D([], [], color="0.3", linewidth=1.6, marker="o", markerfacecolor="0.3",
               label=f"{band_label}, band excludes 0"),
        Patch(color=RADIUS_FILL, label=f"± union-bound radius, residual-SD σ ({residual:.2f})"),
        Line2D([], [], color="0.3", linewidth=1.6, marker="o", markerfacecolor="white",
               label="band contains 0"),
        Line2D([], [], color="black", linestyle="--",
               label=f"± union-bound radius, total-SD σ ({total:.2f})"),
    ]
    fig.legend(handles=backbone_handles, loc="outside right upper", title="judge backbone")
    fig.legend(handles=key, loc="outside lower center", ncols=2)
    ax.set_title(title or "Interaction β: simultaneous bootstrap band vs union-bound radius")
    return fig


# --- rankings, held-out tau, reversal (docs/methods.md sections 2 and 4) --------------------------
@_styled
def ranking_bump_chart(rankings: pd.DataFrame, title: str | None = None) -> Figure:
    """Rank of each backbone within each language, raw (left) vs CBC-calibrated (right).

    ``rankings``: columns language, backbone, rank_raw, rank_cbc (``cbc/rankings.csv``; rank 1 =
    highest mean score in that language). CBC-calibrated means ``M - beta`` are additive, so their
    ranking is the same in every language: flat lines on the right; crossings on the left are rank
    reversals (CBC paper, section 5).
    """
    _require(rankings, ["language", "backbone", "rank_raw", "rank_cbc"], "ranking_bump_chart")
    languages = list(pd.unique(rankings["language"]))
    n_backbones = rankings["backbone"].nunique()
    fig = _figure(7.2, 4.3)
    axes = fig.subplots(1, 2, sharey=True)
    for ax, column, name in zip(axes, ("rank_raw", "rank_cbc"), ("raw scores", "CBC-calibrated")):
        ranks = _pivot(rankings, "backbone", "language", column, "ranking_bump_chart")
        for index, (backbone, row) in enumerate(ranks.iterrows()):
            ax.plot(range(len(languages)), row.to_numpy(float), label=backbone, linewidth=2,
                    markersize=6, **_style_of(index))
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


@_styled
def heldout_tau_forest(tau: pd.DataFrame, published: dict | None = None,
                       title: str | None = None) -> Figure:
    """Held-out Kendall tau per method: mean and bootstrap interval, sorted by mean (best on top).

    ``tau``: columns method, mean, ci_low, ci_high (``heldout/tau.csv``: mean and 2.5/97.5
    percentiles over task bootstraps of the mean tau-b across language pairs; docs/methods.md
    section 2, paper Table 2). ``published``: optional method -> published mean, drawn as hollow
    diamonds (methods absent from ``tau`` are ignored). The value and interval are printed at
    the right; a method without a mean is listed as "not available".
    """
    _require(tau, ["method", "mean", "ci_low", "ci_high"], "heldout_tau_forest")
    data = tau.sort_values("mean", kind="stable", na_position="first").reset_index(drop=True)
    y = np.arange(len(data))
    fig = _figure(7.2, 1.4 + 0.3 * len(data))
    ax = fig.add_subplot()
    ax.axvline(0, color="0.4", linewidth=0.8)
    _interval_dots(ax, y, data["mean"], data["ci_low"], data["ci_high"],
                   label=f"reproduced mean, {INTERVAL_LABEL}", **_style_of(0))
    if published:
        known = data["method"].map(published)
        ax.plot(known, y, linestyle="none", marker="D", markersize=7, markerfacecolor="none",
                markeredgecolor=OKABE_ITO[3], markeredgewidth=1.4, label="published mean")
    for row in data.itertuples():
        interval = np.isfinite(row.ci_low) and np.isfinite(row.ci_high)
        text = ("not available" if not np.isfinite(row.mean) else f"{row.mean:.3f}"
                + (f" [{row.ci_low:.3f}, {row.ci_high:.3f}]" if interval else ""))
        ax.annotate(text, xy=(1.02, row.Index), xycoords=("axes fraction", "data"), va="center",
                    fontsize=8, annotation_clip=False)
    ax.set_yticks(y, data["method"])
    ax.set_ylim(-0.6, len(data) - 0.4)
    ax.yaxis.grid(False)
    ax.set_xlabel("held-out Kendall τ-b (mean over language pairs)")
    ax.legend(loc="lower right")
    ax.set_title(title or "Held-out cross-task rank consistency by method")
    return fig


@_styled
def reversal_strength(pairs: pd.DataFrame, units: str = "score points²",
                      title: str | None = None) -> Figure:
    """Reversal strength ``delta = max(0, -d(a) d(b))`` per backbone pair, sorted, by significance.

    ``pairs``: columns backbone_i, backbone_j, witness_a, witness_b, delta, q_value, reversed,
    significant (``reversal/pairs.csv``; docs/methods.md section 4). Bars are coloured by
    ``significant`` (BH q <= FDR); the labels give the witness languages (a / b) of reversed
    pairs, and the bar ends the q-value.
    """
    _require(pairs, ["backbone_i", "backbone_j", "witness_a", "witness_b", "delta", "q_value",
                     "reversed", "significant"], "reversal_strength")
    data = pairs.sort_values("delta", kind="stable").reset_index(drop=True)
    reversed_, significant = data["reversed"].astype(bool), data["significant"].astype(bool)
    labels = [f"{row.backbone_i} vs {row.backbone_j}\n"
              + (f"({row.witness_a} / {row.witness_b})" if flag else "(no reversal)")
              for row, flag in zip(data.itertuples(), reversed_)]
    colors = {True: OKABE_ITO[0], False: OKABE_ITO[1]}
    fig = _figure(7.2, 1.2 + 0.36 * len(data))
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
    ax.legend(handles=[Patch(color=colors[True], label="significant (BH q ≤ FDR)"),
                       Patch(color=colors[False], label="not significant")], loc="lower right")
    n_reversed, n_significant = int(reversed_.sum()), int((reversed_ & significant).sum())
    ax.set_title(title or f"Rank reversal strength per backbone pair\n{n_reversed} of "
                          f"{len(data)} pairs reverse, {n_significant} significantly")
    return fig


# --- ablations and LOLO (docs/methods.md section 5) -----------------------------------------------
@_styled
def task_count_curve(task_count: pd.DataFrame, units: str = "score points",
                     title: str | None = None) -> Figure:
    """Held-out tau and beta error against the number of tasks n, with the finite-sample radius.

    ``task_count``: columns n_tasks, tau_mean, tau_sd, raw_tau_mean, error_mean, error_sd, radius,
    optional error_true_mean, error_true_sd (``ablations/task_count.csv``; docs/methods.md section 5).
    Left: CBC tau (mean, band +- 1 SD over replicates) and raw tau. Right, log-log: error = mean
    over cells of ``|beta_n - beta_full|`` (+- SD), the radius, and the reference ``c / sqrt(n)``
    with c fitted through the error at the largest n.
    """
    _require(task_count, ["n_tasks", "tau_mean", "tau_sd", "raw_tau_mean", "error_mean",
                          "error_sd", "radius"], "task_count_curve")
    data = task_count.sort_values("n_tasks").reset_index(drop=True)
    n = data["n_tasks"].to_numpy(float)
    fig = _figure(7.2, 3.6)
    left, right = fig.subplots(1, 2)
    blue, orange, green, red = OKABE_ITO[:4]
    left.fill_between(n, data["tau_mean"] - data["tau_sd"], data["tau_mean"] + data["tau_sd"],
                      color=blue, alpha=0.2, linewidth=0, label="CBC ± 1 SD")
    left.plot(n, data["tau_mean"], color=blue, marker="o", label="CBC (mean)")
    left.plot(n, data["raw_tau_mean"], color=orange, marker="s", linestyle="--", label="raw (mean)")
    left.set_xlabel("number of tasks n")
    left.set_ylabel("held-out Kendall τ-b")
    left.set_title("Rank consistency")
    left.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2)

    right.errorbar(n, data["error_mean"], data["error_sd"], color=blue, marker="o", capsize=3,
                   label=r"$|\hat\beta_n - \beta_{\rm full}|$ (mean ± SD)")
    if "error_true_mean" in data:
        right.errorbar(n, data["error_true_mean"], data.get("error_true_sd"), color=green,
                       marker="^", capsize=3,
                       label=r"$|\hat\beta_n - \beta_{\rm true}|$ (mean ± SD)")
    right.plot(n, data["radius"], color=red, marker="D", label="finite-sample radius")
    constant = float(data["error_mean"].iloc[-1] * np.sqrt(n[-1]))
    grid = np.geomspace(n.min(), n.max(), 50)
    right.plot(grid, constant / np.sqrt(grid), color="black", linestyle=":",
               label=rf"${constant:.2f} / \sqrt{{n}}$ (through last point)")
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xticks(n, [f"{value:g}" for value in n])
    right.xaxis.set_minor_locator(NullLocator())
    right.set_xlabel("number of tasks n (log scale)")
    right.set_ylabel(f"β error and radius ({units})")
    right.set_title("Estimation error and radius")
    right.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2)
    fig.suptitle(title or "Task-count ablation")
    return fig


@_styled
def backbone_subsets_panel(subsets: pd.DataFrame, seed: int = 0,
                           title: str | None = None) -> Figure:
    """Held-out CBC tau on every backbone subset, by subset size.

    ``subsets``: columns level, size, tau_mean, tau_sd, optional n_subsets and raw_tau_mean
    (``ablations/backbone_subsets.csv``; docs/methods.md section 5): rows ``level == "subset"`` (mean
    over replicates of one subset) are drawn as horizontally jittered points (jitter from
    ``seed``), rows ``level == "size"`` as the mean +- SD across subsets, with the raw mean.
    """
    _require(subsets, ["level", "size", "tau_mean", "tau_sd"], "backbone_subsets_panel")
    points, sizes = subsets[subsets["level"] == "subset"], subsets[subsets["level"] == "size"]
    if points.empty or sizes.empty:
        raise ValueError("backbone_subsets_panel: needs rows with level == 'subset' and 'size'; "
                         f"levels present: {list(pd.unique(subsets['level']))}")
    sizes = sizes.sort_values("size")
    jitter = np.random.default_rng(seed).uniform(-0.2, 0.2, len(points))
    fig = _figure(6.0, 3.8)
    ax = fig.add_subplot()
    ax.scatter(points["size"] + jitter, points["tau_mean"], s=16, color=OKABE_ITO[5], alpha=0.7,
               linewidth=0, label="one subset (mean over replicates)")
    ax.errorbar(sizes["size"], sizes["tau_mean"], sizes["tau_sd"], color="black", marker="D",
                linestyle="none", capsize=4, markersize=6, label="mean ± SD across subsets",
                zorder=3)
    if "raw_tau_mean" in sizes:
        ax.plot(sizes["size"], sizes["raw_tau_mean"], color=OKABE_ITO[1], marker="s",
                linestyle="--", label="raw (mean across subsets)")
    labels = [f"{size:g}" + (f"\n({count:g} subset{'s' * (count != 1)})" if "n_subsets" in sizes
                             else "")
              for size, count in zip(sizes["size"], sizes.get("n_subsets", sizes["size"]))]
    ax.set_xticks(sizes["size"], labels)
    ax.xaxis.grid(False)
    ax.set_xlabel("number of backbones in the subset")
    ax.set_ylabel("held-out Kendall τ-b")
    ax.legend(loc="lower right")
    ax.set_title(title or "Backbone-subset ablation")
    return fig


@_styled
def lolo_panel(lolo: pd.DataFrame, title: str | None = None) -> Figure:
    """Leave-one-language-out: raw vs zero-shot CBC tau of each held-out language, with intervals.

    ``lolo``: columns language, raw_tau, raw_tau_low, raw_tau_high, cbc_tau, cbc_tau_low,
    cbc_tau_high (``lolo/lolo.csv``; docs/methods.md section 5): tau between the held-out language's
    calibrated row (``beta(h, .) = 0``) and each retained row. The row ``language == "overall"``
    (mean over languages) is drawn last, below a separator, with larger markers.
    """
    columns = ["raw_tau", "raw_tau_low", "raw_tau_high", "cbc_tau", "cbc_tau_low", "cbc_tau_high"]
    _require(lolo, ["language", *columns], "lolo_panel")
    is_overall = (lolo["language"] == "overall").to_numpy()
    data = pd.concat([lolo[~is_overall], lolo[is_overall]], ignore_index=True)
    y = np.arange(len(data), dtype=float)
    y[len(data) - int(is_overall.sum()):] += 0.6
    fig = _figure(6.0, 1.6 + 0.36 * len(data))
    ax = fig.add_subplot()
    series = (("raw", "raw", -0.15), ("cbc", "CBC, zero-shot (β(h,·) = 0)", 0.15))
    for index, (prefix, name, offset) in enumerate(series):
        style = _style_of(index)
        _interval_dots(ax, y + offset, data[f"{prefix}_tau"], data[f"{prefix}_tau_low"],
                       data[f"{prefix}_tau_high"], label=name, **style)
        overall = data["language"] == "overall"
        ax.plot(data.loc[overall, f"{prefix}_tau"], (y + offset)[overall.to_numpy()],
                linestyle="none", color=style["color"], marker=style["marker"], markersize=9)
    if is_overall.any():
        ax.axhline(len(data) - is_overall.sum() - 0.2, color="0.6", linewidth=0.8)
    ax.set_yticks(y, ["overall (mean)" if name == "overall" else name for name in data["language"]])
    ax.set_ylim(y.max() + 0.6, -0.6)
    ax.yaxis.grid(False)
    ax.set_xlabel(f"Kendall τ-b, held-out language vs retained languages ({INTERVAL_LABEL})")
    ax.set_ylabel("held-out language")
    fig.legend(loc="outside lower center", ncols=2)
    ax.set_title(title or "Leave-one-language-out: raw vs zero-shot CBC")
    return fig


@_styled
def deletion_mae(mae: pd.DataFrame, units: str = "score points",
                 title: str | None = None) -> Figure:
    """MAE of the interaction after random cell deletion, per estimator, against the deletion rate.

    ``mae``: columns rate, method, mae_mean, mae_sd (``missing/mae.csv``): MAE = mean over cells
    of ``|beta_deleted - beta_full|``, mean +- SD over replicates (issue 10). Series are dodged
    slightly along x so their error bars do not overlap.
    """
    _require(mae, ["rate", "method", "mae_mean", "mae_sd"], "deletion_mae")
    methods = list(pd.unique(mae["method"]))
    rates = np.sort(mae["rate"].unique()) * 100
    step = np.diff(rates).min() if len(rates) > 1 else 1.0
    fig = _figure(5.4, 3.6)
    ax = fig.add_subplot()
    for index, method in enumerate(methods):
        rows = mae[mae["method"] == method].sort_values("rate")
        dodge = 0.06 * step * (index - (len(methods) - 1) / 2)
        ax.errorbar(rows["rate"] * 100 + dodge, rows["mae_mean"], rows["mae_sd"], capsize=3,
                    label=method, **_style_of(index))
    ax.set_xticks(rates, [f"{rate:g}" for rate in rates])
    ax.set_xlabel("cells deleted at random (%)")
    ax.set_ylabel(f"MAE of β vs full panel ({units})")
    ax.set_ylim(bottom=0)
    ax.legend(title="estimator (mean ± SD)", loc="upper left")
    ax.set_title(title or "Interaction on incomplete panels")
    return fig


# --- conditional mutual information (docs/methods.md section 6) -----------------------------------
@_styled
def cmi_null_histogram(null: pd.DataFrame, summary: dict, bins: int = 30,
                       title: str | None = None) -> Figure:
    """Permutation null of the mean CMI per convention, with the observed value and p-value.

    ``null``: columns convention, statistic (``information/null.parquet``: the statistic of each
    within-stratum label permutation); ``summary``: ``information/cmi.json``, one entry per
    convention with observed, p_value and optional debiased, band_low, band_high (docs/methods.md
    section 6: debiased = observed - null, band = 2.5/97.5 percentiles of the debiased values).
    """
    _require(null, ["convention", "statistic"], "cmi_null_histogram")
    conventions = list(pd.unique(null["convention"]))
    for convention in conventions:
        entry = summary.get(convention)
        if not isinstance(entry, dict) or not {"observed", "p_value"} <= set(entry):
            raise ValueError(f"cmi_null_histogram: summary has no observed/p_value for convention "
                             f"{convention!r}")
    fig = _figure(0.4 + 3.4 * len(conventions), 3.5)
    axes = fig.subplots(1, len(conventions), squeeze=False)[0]
    for ax, convention in zip(axes, conventions):
        values = null.loc[null["convention"] == convention, "statistic"].to_numpy(float)
        entry = summary[convention]
        observed = float(entry["observed"])
        ax.hist(values, bins=bins, color=OKABE_ITO[5], linewidth=0,
                label=f"permutation null ({len(values)} draws)")
        ax.axvline(observed, color=OKABE_ITO[3], linewidth=2,
                   label=f"observed {observed:.3f} (p = {float(entry['p_value']):.3g})")
        if {"debiased", "band_low", "band_high"} <= set(entry):
            band = f"[{entry['band_low']:.3f}, {entry['band_high']:.3f}]"
            ax.plot([], [], linestyle="none", label=f"debiased {entry['debiased']:.3f} {band}")
        low, high = min(values.min(), observed), max(values.max(), observed)
        pad = 0.08 * (high - low if high > low else 1.0)
        ax.set_xlim(low - pad, high + pad)
        ax.xaxis.set_major_locator(MaxNLocator(5))
        ax.set_xlabel("mean CMI over strata (nats)")
        ax.set_title(f"{convention} convention")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22))
    axes[0].set_ylabel("permutation draws")
    fig.suptitle(title or "I(score; language | backbone, task): permutation null vs observed")
    return fig


# --- Judge-LS (docs/methods.md section 8) ---------------------------------------------------------
@_styled
def judge_ls_flips(flips: pd.DataFrame, title: str | None = None) -> Figure:
    """Flip rate per judge and target condition, pooled subsets, item-clustered 95% intervals.

    ``flips``: columns judge, reference, target, subset, flip_rate, flip_ci_low, flip_ci_high
    (``judge_ls/flips.csv``; only ``subset == "all"`` is drawn). A flip is a verdict that changes
    between the reference and the target condition. Grouped dot plot: one row per target, judges
    dodged within the row (colour and marker per judge).
    """
    _require(flips, ["judge", "reference", "target", "subset", "flip_rate", "flip_ci_low",
                     "flip_ci_high"], "judge_ls_flips")
    data = _only_subset_all(flips, "judge_ls_flips")
    references = list(pd.unique(data["reference"]))
    rows = data["target"] if len(references) == 1 else data["reference"] + " → " + data["target"]
    data = data.assign(row=rows)
    categories = list(pd.unique(data["row"]))
    judges = list(pd.unique(data["judge"]))
    width = 0.8 / len(judges)
    fig = _figure(7.2, 1.6 + 0.07 * len(categories) * max(len(judges), 3))
    ax = fig.add_subplot()
    position = data["row"].map({name: i for i, name in enumerate(categories)}).to_numpy(float)
    for index, judge in enumerate(judges):
        keep = (data["judge"] == judge).to_numpy()
        offset = (index - (len(judges) - 1) / 2) * width
        _interval_dots(ax, position[keep] + offset, data["flip_rate"][keep],
                       data["flip_ci_low"][keep], data["flip_ci_high"][keep], label=judge,
                       **_style_of(index))
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


@_styled
def judge_ls_position(position: pd.DataFrame, title: str | None = None) -> Figure:
    """Position inconsistency per judge and condition, pooled subsets, with Wilson 95% intervals.

    ``position``: columns judge, condition, subset, position_inconsistency, position_ci_low,
    position_ci_high (``judge_ls/position.csv``; only ``subset == "all"``): the share of pairs
    whose verdict changes when the two responses swap places. Small multiples, one panel per
    judge (shared axes, conditions in order of first appearance; a condition a judge was not run
    on is an empty row).
    """
    _require(position, ["judge", "condition", "subset", "position_inconsistency",
                        "position_ci_low", "position_ci_high"], "judge_ls_position")
    data = _only_subset_all(position, "judge_ls_position")
    judges = list(pd.unique(data["judge"]))
    conditions = list(pd.unique(data["condition"]))
    n_cols = min(3, len(judges))
    n_rows = -(-len(judges) // n_cols)
    fig = _figure(max(6.0, 1.6 + 2.0 * n_cols), 1.2 + n_rows * (0.5 + 0.19 * len(conditions)))
    axes = fig.subplots(n_rows, n_cols, sharex=True, sharey=True, squeeze=False).ravel()
    order = {name: i for i, name in enumerate(conditions)}
    for ax, judge in zip(axes, judges):
        rows = data[data["judge"] == judge]
        _interval_dots(ax, rows["condition"].map(order), rows["position_inconsistency"],
                       rows["position_ci_low"], rows["position_ci_high"], **_style_of(0))
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


# --- simulation study (issue 10, part 5) ---------------------------------------------------------
@_styled
def simulation_coverage(summary: pd.DataFrame, level: float = 0.95,
                        title: str | None = None) -> Figure:
    """Simultaneous coverage of beta by the union radius and the bootstrap band, per scenario.

    ``summary``: columns scenario, n_panels, coverage_radius_total, coverage_radius_residual,
    coverage_band (``simulation/summary.csv``): the share of simulated panels in which every
    cell's true beta lies inside. Binomial 95% intervals over the panels; nominal level dashed.
    """
    columns = {"coverage_radius_total": "union radius, total SD (paper)",
               "coverage_radius_residual": "union radius, residual SD",
               "coverage_band": "bootstrap max-|t| band"}
    _require(summary, ["scenario", "n_panels", *columns], "simulation_coverage")
    scenarios = list(summary["scenario"])
    fig = _figure(6.5, 0.5 + 0.55 * len(scenarios) + 1.0)
    ax = fig.add_subplot()
    y = np.arange(len(scenarios))
    for index, (column, label) in enumerate(columns.items()):
        share = summary[column].to_numpy(float)
        half = 1.96 * np.sqrt(share * (1 - share) / summary["n_panels"].to_numpy(float))
        offset = (index - 1) * 0.22
        _interval_dots(ax, y + offset, share, np.clip(share - half, 0, 1),
                       np.clip(share + half, 0, 1), label=label, **_style_of(index))
    ax.axvline(level, color="0.3", linestyle="--", linewidth=1, label=f"nominal {level:.0%}")
    ax.set_yticks(y, [f"{s} ({n} panels)" for s, n in zip(scenarios, summary["n_panels"])])
    ax.invert_yaxis()
    ax.set_xlabel("simultaneous coverage of all β cells (share of panels)")
    ax.set_xlim(min(0.8, float(summary[list(columns)].min().min()) - 0.02), 1.005)
    ax.legend(loc="lower left", fontsize="small")
    ax.set_title(title or "Coverage of the interaction: union radius vs bootstrap band")
    return fig
