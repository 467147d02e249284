"""Figures of the simulation study (docs/methods.md 10.5)."""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .style import interval_dots, new_figure, require_columns, series_style, styled


@styled
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
    require_columns(summary, ["scenario", "n_panels", *columns], "simulation_coverage")
    scenarios = list(summary["scenario"])
    fig = new_figure(6.5, 0.5 + 0.55 * len(scenarios) + 1.0)
    ax = fig.add_subplot()
    y = np.arange(len(scenarios))
    for index, (column, label) in enumerate(columns.items()):
        share = summary[column].to_numpy(float)
        half = 1.96 * np.sqrt(share * (1 - share) / summary["n_panels"].to_numpy(float))
        offset = (index - 1) * 0.22
        interval_dots(ax, y + offset, share, np.clip(share - half, 0, 1),
                       np.clip(share + half, 0, 1), label=label, **series_style(index))
    ax.axvline(level, color="0.3", linestyle="--", linewidth=1, label=f"nominal {level:.0%}")
    ax.set_yticks(y, [f"{s} ({n} panels)" for s, n in zip(scenarios, summary["n_panels"])])
    ax.invert_yaxis()
    ax.set_xlabel("simultaneous coverage of all β cells (share of panels)")
    ax.set_xlim(min(0.8, float(summary[list(columns)].min().min()) - 0.02), 1.005)
    ax.legend(loc="lower left", fontsize="small")
    ax.set_title(title or "Coverage of the interaction: union radius vs bootstrap band")
    return fig
