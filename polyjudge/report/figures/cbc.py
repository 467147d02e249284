"""Figures of CBC estimator and bands (docs/methods.md section 1)."""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from .style import (
    DIVERGING_CMAP,
    RADIUS_FILL,
    new_figure,
    pivot_in_order,
    require_columns,
    series_style,
    styled,
)


@styled
def interaction_heatmap(beta: pd.DataFrame, units: str = "score points",
                        decimals: int | None = None, title: str | None = None) -> Figure:
    """Language x backbone heatmap of the CBC interaction (CBC paper, section 3).

    ``beta``: columns language, backbone, beta (``results/{panel}/cbc/beta.csv``), where
    ``beta = M - row means - column means + grand mean`` of the cell-mean matrix M. Diverging
    colours centred at 0 (symmetric limits), each cell annotated with its value; ``decimals``
    None gives 1 decimal when max |beta| >= 1, else 2.
    """
    require_columns(beta, ["language", "backbone", "beta"], "interaction_heatmap")
    grid = pivot_in_order(beta, "language", "backbone", "beta", "interaction_heatmap")
    values = grid.to_numpy(float)
    limit = float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 1.0
    limit = limit if limit > 0 else 1.0
    decimals = (1 if limit >= 1 else 2) if decimals is None else decimals
    n_rows, n_cols = grid.shape
    fig = new_figure(1.9 + 0.9 * n_cols, 1.3 + 0.4 * n_rows)
    ax = fig.add_subplot()
    image = ax.imshow(values, cmap=DIVERGING_CMAP, vmin=-limit, vmax=limit, aspect="auto")
    for (row, col), value in np.ndenumerate(values):
        if np.isfinite(value):  # "+ 0.0" turns a rounded -0.0 into 0.0
            ax.text(col, row, f"{round(value, decimals) + 0.0:.{decimals}f}", ha="center",
                    va="center", fontsize=8,
                    color="white" if abs(value) > 0.6 * limit else "black")
    ax.set_xticks(range(n_cols), grid.columns, rotation=30, ha="right", rotation_mode="anchor")
    ax.set_yticks(range(n_rows), grid.index)
    ax.grid(False)
    ax.spines[:].set_visible(False)
    ax.set_xlabel("judge backbone")
    ax.set_ylabel("prompt language")
    fig.colorbar(image, ax=ax, label=f"interaction β ({units})", shrink=0.9)
    ax.set_title(title or "Language × backbone interaction β (CBC)")
    return fig


@styled
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
    require_columns(bands, ["language", "backbone", "beta", "band_low", "band_high"],
                    "band_vs_radius")
    missing = [key for key in ("radius_total_sd", "radius_residual_sd") if key not in summary]
    if missing:
        raise ValueError(f"band_vs_radius: summary lacks {missing}; keys: {list(summary)}")
    languages = list(pd.unique(bands["language"]))
    backbones = list(pd.unique(bands["backbone"]))
    width = len(backbones) + 1
    x = (bands["language"].map({name: i for i, name in enumerate(languages)}) * width
         + bands["backbone"].map({name: i for i, name in enumerate(backbones)})).to_numpy()
    excludes = ((bands["band_low"] > 0) | (bands["band_high"] < 0)).to_numpy()

    fig = new_figure(7.2, 4.4)
    ax = fig.add_subplot()
    residual, total = float(summary["radius_residual_sd"]), float(summary["radius_total_sd"])
    ax.axhspan(-residual, residual, color=RADIUS_FILL, linewidth=0, zorder=0)
    for sign in (-1, 1):
        ax.axhline(sign * total, color="black", linestyle="--", linewidth=1)
    ax.axhline(0, color="0.4", linewidth=0.8)
    backbone_handles = []
    for index, backbone in enumerate(backbones):
        style = series_style(index)
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
    key = [  # a marker kind no cell has gets no entry
        Line2D([], [], color="0.3", linewidth=1.6, marker="o", markerfacecolor="0.3",
               label=f"{band_label}, band excludes 0") if excludes.any() else None,
        Patch(color=RADIUS_FILL, label=f"± union-bound radius, residual-SD σ ({residual:.2f})"),
        Line2D([], [], color="0.3", linewidth=1.6, marker="o", markerfacecolor="white",
               label="band contains 0" if excludes.any() else f"{band_label}, band contains 0")
        if not excludes.all() else None,
        Line2D([], [], color="black", linestyle="--",
               label=f"± union-bound radius, total-SD σ ({total:.2f})"),
    ]
    key = [entry for entry in key if entry is not None]
    fig.legend(handles=backbone_handles, loc="outside right upper", title="judge backbone")
    fig.legend(handles=key, loc="outside lower center", ncols=2)
    ax.set_title(title or "Interaction β: simultaneous bootstrap band vs union-bound radius")
    return fig
