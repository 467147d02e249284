"""Figures of conditional mutual information (docs/methods.md section 6)."""
from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from .style import OKABE_ITO, new_figure, require_columns, styled


@styled
def cmi_null_histogram(null: pd.DataFrame, summary: dict, bins: int = 30,
                       title: str | None = None) -> Figure:
    """Permutation null of the mean CMI per convention, with the observed value and p-value.

    ``null``: columns convention, statistic (``information/null.parquet``: the statistic of each
    within-stratum label permutation); ``summary``: ``information/cmi.json``, one entry per
    convention with observed, p_value and optional debiased, band_low, band_high (docs/methods.md
    section 6: debiased = observed - null, band = 2.5/97.5 percentiles of the debiased values).
    """
    require_columns(null, ["convention", "statistic"], "cmi_null_histogram")
    conventions = list(pd.unique(null["convention"]))
    for convention in conventions:
        entry = summary.get(convention)
        if not isinstance(entry, dict) or not {"observed", "p_value"} <= set(entry):
            raise ValueError(f"cmi_null_histogram: summary has no observed/p_value for convention "
                             f"{convention!r}")
    fig = new_figure(0.4 + 3.4 * len(conventions), 3.5)
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
