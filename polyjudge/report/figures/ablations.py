"""Figures of ablations and LOLO (docs/methods.md section 5)."""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator

from .style import (
    INTERVAL_LABEL,
    OKABE_ITO,
    interval_dots,
    new_figure,
    require_columns,
    series_style,
    styled,
)


@styled
def task_count_curve(task_count: pd.DataFrame, units: str = "score points",
                     title: str | None = None) -> Figure:
    """Held-out tau and beta error against the number of tasks n, with the finite-sample radius.

    ``task_count``: columns n_tasks, tau_mean, tau_sd, raw_tau_mean, error_mean, error_sd, radius,
    optional error_true_mean, error_true_sd (``ablations/task_count.csv``; docs/methods.md
    section 5). Left: CBC tau (mean, band +- 1 SD over replicates) and raw tau. Right, log-log:
    error = mean over cells of ``|beta_n - beta_full|`` (+- SD), the radius, and the reference
    ``c / sqrt(n)`` with c fitted through the error at the largest n.
    """
    require_columns(task_count, ["n_tasks", "tau_mean", "tau_sd", "raw_tau_mean", "error_mean",
                          "error_sd", "radius"], "task_count_curve")
    data = task_count.sort_values("n_tasks").reset_index(drop=True)
    n = data["n_tasks"].to_numpy(float)
    fig = new_figure(7.2, 3.6)
    left, right = fig.subplots(1, 2)
    blue, orange, green, red = OKABE_ITO[:4]
    left.fill_between(n, data["tau_mean"] - data["tau_sd"], data["tau_mean"] + data["tau_sd"],
                      color=blue, alpha=0.2, linewidth=0, label="CBC ± 1 SD")
    left.plot(n, data["tau_mean"], color=blue, marker="o", label="CBC (mean)")
    left.plot(n, data["raw_tau_mean"], color=orange, marker="s", linestyle="--",
              label="raw (mean)")
    left.set_xlabel("number of tasks n")
    left.set_ylabel("held-out Kendall τ-b")
    left.set_title("Rank consistency")
    left.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2)

    right.errorbar(n, data["error_mean"], data["error_sd"], color=blue, marker="o", capsize=3,
                   label=r"$|\hat\beta_n - \beta_{\rm full}|$ (mean ± SD)")
    if "error_true_mean" in data and np.isfinite(data["error_true_mean"]).any():
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


@styled
def backbone_subsets_panel(subsets: pd.DataFrame, seed: int = 0,
                           title: str | None = None) -> Figure:
    """Held-out CBC tau on every backbone subset, by subset size.

    ``subsets``: columns level, size, tau_mean, tau_sd, optional n_subsets and raw_tau_mean
    (``ablations/backbone_subsets.csv``; docs/methods.md section 5): rows ``level == "subset"``
    (mean over replicates of one subset) are drawn as horizontally jittered points (jitter from
    ``seed``), rows ``level == "size"`` as the mean +- SD across subsets, with the raw mean.
    """
    require_columns(subsets, ["level", "size", "tau_mean", "tau_sd"], "backbone_subsets_panel")
    points, sizes = subsets[subsets["level"] == "subset"], subsets[subsets["level"] == "size"]
    if points.empty or sizes.empty:
        raise ValueError("backbone_subsets_panel: needs rows with level == 'subset' and 'size'; "
                         f"levels present: {list(pd.unique(subsets['level']))}")
    sizes = sizes.sort_values("size")
    jitter = np.random.default_rng(seed).uniform(-0.2, 0.2, len(points))
    fig = new_figure(6.0, 3.8)
    ax = fig.add_subplot()
    ax.scatter(points["size"] + jitter, points["tau_mean"], s=16, color=OKABE_ITO[5], alpha=0.7,
               linewidth=0, label="one subset (mean over replicates)")
    ax.errorbar(sizes["size"], sizes["tau_mean"], sizes["tau_sd"], color="black", marker="D",
                linestyle="none", capsize=4, markersize=6, label="mean ± SD across subsets",
                zorder=3)
    if "raw_tau_mean" in sizes and np.isfinite(sizes["raw_tau_mean"]).any():
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


@styled
def lolo_panel(lolo: pd.DataFrame, title: str | None = None) -> Figure:
    """Leave-one-language-out: raw vs zero-shot CBC tau of each held-out language, with intervals.

    ``lolo``: columns language, raw_tau, raw_tau_low, raw_tau_high, cbc_tau, cbc_tau_low,
    cbc_tau_high (``lolo/lolo.csv``; docs/methods.md section 5): tau between the held-out
    language's calibrated row (``beta(h, .) = 0``) and each retained row. The row
    ``language == "overall"`` (mean over languages) is drawn last, below a separator, with larger
    markers.
    """
    columns = ["raw_tau", "raw_tau_low", "raw_tau_high", "cbc_tau", "cbc_tau_low", "cbc_tau_high"]
    require_columns(lolo, ["language", *columns], "lolo_panel")
    is_overall = (lolo["language"] == "overall").to_numpy()
    data = pd.concat([lolo[~is_overall], lolo[is_overall]], ignore_index=True)
    y = np.arange(len(data), dtype=float)
    y[len(data) - int(is_overall.sum()):] += 0.6
    fig = new_figure(6.0, 1.6 + 0.36 * len(data))
    ax = fig.add_subplot()
    series = (("raw", "raw", -0.15), ("cbc", "CBC, zero-shot (β(h,·) = 0)", 0.15))
    for index, (prefix, name, offset) in enumerate(series):
        style = series_style(index)
        interval_dots(ax, y + offset, data[f"{prefix}_tau"], data[f"{prefix}_tau_low"],
                       data[f"{prefix}_tau_high"], label=name, **style)
        overall = data["language"] == "overall"
        ax.plot(data.loc[overall, f"{prefix}_tau"], (y + offset)[overall.to_numpy()],
                linestyle="none", color=style["color"], marker=style["marker"], markersize=9)
    if is_overall.any():
        ax.axhline(len(data) - is_overall.sum() - 0.2, color="0.6", linewidth=0.8)
    ax.set_yticks(y, ["overall (mean)" if name == "overall" else name
                      for name in data["language"]])
    ax.set_ylim(y.max() + 0.6, -0.6)
    ax.yaxis.grid(False)
    ax.set_xlabel(f"Kendall τ-b, held-out language vs retained languages ({INTERVAL_LABEL})")
    ax.set_ylabel("held-out language")
    fig.legend(loc="outside lower center", ncols=2)
    ax.set_title(title or "Leave-one-language-out: raw vs zero-shot CBC")
    return fig


@styled
def deletion_mae(mae: pd.DataFrame, units: str = "score points",
                 title: str | None = None) -> Figure:
    """MAE of the interaction after random cell deletion, per estimator, against the deletion rate.

    ``mae``: columns rate, method, mae_mean, mae_sd (``missing/mae.csv``): MAE = mean over cells
    of ``|beta_deleted - beta_full|``, mean +- SD over replicates (docs/methods.md 10.1). Series
    are dodged slightly along x so their error bars do not overlap.
    """
    require_columns(mae, ["rate", "method", "mae_mean", "mae_sd"], "deletion_mae")
    methods = list(pd.unique(mae["method"]))
    rates = np.sort(mae["rate"].unique()) * 100
    step = np.diff(rates).min() if len(rates) > 1 else 1.0
    fig = new_figure(5.4, 3.6)
    ax = fig.add_subplot()
    for index, method in enumerate(methods):
        rows = mae[mae["method"] == method].sort_values("rate")
        dodge = 0.06 * step * (index - (len(methods) - 1) / 2)
        ax.errorbar(rows["rate"] * 100 + dodge, rows["mae_mean"], rows["mae_sd"], capsize=3,
                    label=method, **series_style(index))
    ax.set_xticks(rates, [f"{rate:g}" for rate in rates])
    ax.set_xlabel("cells deleted at random (%)")
    ax.set_ylabel(f"MAE of β vs full panel ({units})")
    ax.set_ylim(bottom=0)
    ax.legend(title="estimator (mean ± SD)", loc="upper left")
    ax.set_title(title or "Interaction on incomplete panels")
    return fig
