"""Add a judge to a measured panel: check and combine the run tables, rank the new judge with
task-bootstrap intervals, and measure how far the existing judges' beta moved.

docs/methods.md section 10 ("Adding a judge"). A panel with ``extends: <base>`` is the base
panel's validated runs plus the new judge's run table on the same tasks and languages; the
combined panel is calibrated like any other. For the plain estimator on a complete panel, adding
one backbone to ``m`` shifts every existing cell of language ``l`` by the same amount,
``beta'[l, b] - beta[l, b] = -beta'[l, new] / m`` (rows of beta sum to 0 before and after), so
the shift is small when the new judge has little language interaction or the panel many judges.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from polyjudge.cbc.bootstrap import task_bootstrap_chunks, weighted_cell_means
from polyjudge.cbc.estimator import double_center, rank_by_count
from polyjudge.data.errors import InputError
from polyjudge.data.io import natural_key
from polyjudge.data.panel import Panel

RANK_COLUMNS = ["language", "backbone", "new", "mean_raw", "mean_cbc", "rank_raw", "rank_raw_low",
                "rank_raw_high", "rank_cbc", "rank_cbc_low", "rank_cbc_high", "p_first_raw",
                "p_first_cbc"]
SHIFT_COLUMNS = ["language", "backbone", "beta_base", "beta_combined", "shift"]


def _listed(labels, limit: int = 8) -> str:
    labels = sorted((str(x) for x in labels), key=natural_key)
    more = f" and {len(labels) - limit} more" if len(labels) > limit else ""
    return ", ".join(repr(x) for x in labels[:limit]) + more


def check_extension(base: pd.DataFrame, new: pd.DataFrame, base_name: str, source) -> None:
    """The new judge's runs cover the base panel's tasks and languages, no more and no fewer, and
    name backbones the base panel does not have; else an InputError naming what differs."""
    problems = []
    for axis in ("task", "language"):
        have, want = set(new[axis].astype(str)), set(base[axis].astype(str))
        if want - have:
            problems.append(f"{axis}s of panel '{base_name}' without runs in the new table: "
                            f"{_listed(want - have)}")
        if have - want:
            problems.append(f"{axis}s in the new table that panel '{base_name}' does not have: "
                            f"{_listed(have - want)}")
    shared = set(new["backbone"].astype(str)) & set(base["backbone"].astype(str))
    if shared:
        problems.append(f"backbone(s) {_listed(shared)} are already judges of panel "
                        f"'{base_name}' (rename the new judge, e.g. in its `columns` or file)")
    if problems:
        raise InputError(source, f"cannot extend panel '{base_name}':\n    "
                         + "\n    ".join(problems),
                         f"the new judge's runs on exactly the tasks and languages of panel "
                         f"'{base_name}', under backbone names of its own")


def extend_runs(base: pd.DataFrame, new: pd.DataFrame, base_name: str, source) -> pd.DataFrame:
    """The combined run table (base rows first), after :func:`check_extension`."""
    check_extension(base, new, base_name, source)
    columns = ["task", "language", "backbone", "framework", "score"]
    frames = [frame[columns].astype({c: str for c in columns[:-1]}) for frame in (base, new)]
    return pd.concat(frames, ignore_index=True)


def backbone_order(base_order, new_backbones) -> list[str]:
    """The base panel's backbones in its order, then the new ones in natural order."""
    base_order = [str(b) for b in base_order]
    added = sorted({str(b) for b in new_backbones} - set(base_order), key=natural_key)
    return base_order + added


def rank_intervals(panel: Panel, new_backbones, n_replicates: int = 1000, level: float = 0.95,
                   seed: int = 0) -> pd.DataFrame:
    """Raw and CBC rank of every backbone in every language, with task-bootstrap intervals.

    Each replicate resamples the tasks with replacement, recomputes the cell means, ranks them
    (raw) and ranks them again after double-centring that replicate's own cell means (CBC, so
    the uncertainty of beta is included). Intervals are the ``(1 - level) / 2`` and
    ``(1 + level) / 2`` quantiles of the replicate ranks (lower, 'higher' rounded outward to
    whole ranks); ``p_first_*`` is the share of replicates in which the backbone ranks first.
    Columns :data:`RANK_COLUMNS`; ``new`` marks the added judges.
    """
    if not panel.is_complete:
        raise InputError("rank intervals", "the combined panel has missing cells",
                         "a complete combined panel (every task x language x backbone cell)")
    means = panel.cell_means()
    beta = double_center(means)
    rng = np.random.default_rng(seed)
    raw, cbc = [], []
    for boot in task_bootstrap_chunks(panel.shape[0], n_replicates, rng, chunk_size=200):
        replicate = weighted_cell_means(panel.values, boot.counts)
        raw.append(rank_by_count(replicate))
        cbc.append(rank_by_count(replicate - double_center(replicate)))
    raw, cbc = np.concatenate(raw), np.concatenate(cbc)
    q = ((1 - level) / 2, (1 + level) / 2)
    lang, bb = np.meshgrid(panel.languages, panel.backbones, indexing="ij")
    frame = pd.DataFrame({"language": lang.ravel(), "backbone": bb.ravel()})
    frame["new"] = frame["backbone"].isin([str(b) for b in new_backbones])
    frame["mean_raw"] = means.ravel()
    frame["mean_cbc"] = (means - beta).ravel()
    for name, draws, point in (("raw", raw, means), ("cbc", cbc, means - beta)):
        frame[f"rank_{name}"] = rank_by_count(point).ravel()
        frame[f"rank_{name}_low"] = np.floor(np.quantile(draws, q[0], axis=0)).astype(int).ravel()
        frame[f"rank_{name}_high"] = np.ceil(np.quantile(draws, q[1], axis=0)).astype(int).ravel()
    for name, draws in (("raw", raw), ("cbc", cbc)):
        frame[f"p_first_{name}"] = (draws == 1).mean(axis=0).ravel()
    return frame[RANK_COLUMNS]


def beta_shift(beta_base: pd.DataFrame, beta_combined: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Beta of every base cell in the base panel and in the combined panel, and the shift.

    Both tables have columns language, backbone, beta (``cbc/beta.csv``). Returns the per-cell
    table (columns :data:`SHIFT_COLUMNS`, base order) and a summary: the largest absolute shift
    and its cell, and the mean absolute shift.
    """
    keys = ["language", "backbone"]
    base = beta_base.astype({k: str for k in keys}).rename(columns={"beta": "beta_base"})
    combined = beta_combined.astype({k: str for k in keys}).rename(
        columns={"beta": "beta_combined"})
    table = base[keys + ["beta_base"]].merge(combined[keys + ["beta_combined"]], on=keys,
                                             how="left", validate="one_to_one")
    if table["beta_combined"].isna().any():
        missing = table.loc[table["beta_combined"].isna(), keys].head(5).values.tolist()
        raise InputError("beta shift", f"base cells absent from the combined panel: {missing}",
                         "every cell of the base panel in the combined panel")
    table["shift"] = table["beta_combined"] - table["beta_base"]
    worst = table.loc[table["shift"].abs().idxmax()]
    summary = {"max_abs_shift": float(table["shift"].abs().max()),
               "max_abs_shift_cell": {"language": worst["language"],
                                      "backbone": worst["backbone"]},
               "mean_abs_shift": float(table["shift"].abs().mean()),
               "max_abs_beta_base": float(table["beta_base"].abs().max())}
    return table[SHIFT_COLUMNS], summary
