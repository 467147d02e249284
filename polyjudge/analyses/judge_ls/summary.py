"""A short Markdown report of the Judge-LS tables."""
from __future__ import annotations

import pandas as pd

from .verdicts import ALL


def _markdown(table: pd.DataFrame) -> str:
    rows = ([list(map(str, table.columns))]
            + table.astype(object).fillna("").astype(str).values.tolist())
    lines = ["| " + " | ".join(r) + " |" for r in rows]
    lines.insert(1, "|" + "---|" * len(table.columns))
    return "\n".join(lines)


def _rate(value, low, high) -> str:
    return "n/a" if pd.isna(value) else f"{100 * value:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def summary_markdown(accuracy: pd.DataFrame, flips: pd.DataFrame | None = None,
                     position: pd.DataFrame | None = None, tie_probe: pd.DataFrame | None = None,
                     sensitivity: pd.DataFrame | None = None, audit: pd.DataFrame | None = None,
                     title: str = "Judge-LS summary") -> str:
    """A short Markdown report: accuracy, flips, position inconsistency, tie probes, audit.

    Uses the pooled rows (subset ``all``, order ``all``); rates are percent with 95% (or the
    tables') intervals in brackets.
    """
    acc = accuracy.loc[(accuracy["subset"] == ALL) & (accuracy["order"] == ALL)]
    parts = [f"# {title}", "",
             f"{int(acc['n'].sum())} gold judgments scored; {int(acc['n_invalid'].sum())} "
             "verdicts without a usable answer, unparseable or missing (left out of the rates, "
             "counted here). Intervals in brackets "
             "are item-clustered: the two answer orders of an item count as one cluster.", "",
             "## Strict accuracy", "",
             _markdown(acc.assign(value=[_rate(*r) for r in acc[["strict_accuracy",
                                                                  "strict_ci_low",
                                                                  "strict_ci_high"]].values])
                       .pivot(index="judge", columns="condition", values="value")
                       .reindex(index=pd.unique(acc["judge"]), columns=pd.unique(acc["condition"]))
                       .reset_index())]
    best = acc.loc[acc.groupby("judge", sort=False)["strict_accuracy"].idxmax()]
    parts += ["", "Most accurate condition: " + "; ".join(
        f"{j} {c}" for j, c in zip(best["judge"], best["condition"])) + "."]
    if flips is not None and len(flips):
        f = flips.loc[flips["subset"] == ALL]
        parts += ["", f"## Flips against `{f['reference'].iloc[0]}`", "", _markdown(pd.DataFrame({
            "judge": f["judge"], "target": f["target"], "pairs": f["n_pairs"],
            "flip rate": [_rate(*r) for r in f[["flip_rate", "flip_ci_low",
                                                "flip_ci_high"]].values],
            "gold-correctness flips": [_rate(*r) for r in f[["gold_flip_rate", "gold_flip_ci_low",
                                                            "gold_flip_ci_high"]].values],
            "b / c": [f"{b} / {c}" for b, c in f[["n_discordant_b", "n_discordant_c"]].values],
            "McNemar p": [f"{p:.3g}" for p in f["mcnemar_p"]]}
            | ({"clustered McNemar p": [f"{p:.3g}" for p in f["mcnemar_cluster_p"]]}
               if "mcnemar_cluster_p" in f else {})))]
        parts += ["", f"Flip rates range {100 * f['flip_rate'].min():.1f}%-"
                      f"{100 * f['flip_rate'].max():.1f}%." if f["flip_rate"].notna().any()
                  else "No pair of usable judgments: no flip rate."]
    if sensitivity is not None and len(sensitivity):
        s = sensitivity.loc[(sensitivity["subset"] == ALL) & (sensitivity["items"] == "unflagged")]
        parts += ["", f"Without the {int(s['n_excluded_items'].max())} flagged items flip rates "
                      f"range {100 * s['flip_rate'].min():.1f}%-{100 * s['flip_rate'].max():.1f}%."
                  if len(s) else "Every item has a flagged translation: no flip rates without "
                  "them."]
    if position is not None and len(position):
        p = position.loc[position["subset"] == ALL]
        parts += ["", "## Position inconsistency", "", _markdown(
            p.assign(value=[_rate(*r) for r in p[["position_inconsistency", "position_ci_low",
                                                  "position_ci_high"]].values])
            .pivot(index="judge", columns="condition", values="value")
            .reindex(index=pd.unique(p["judge"]), columns=pd.unique(p["condition"]))
            .reset_index())]
        means = p.groupby("condition", sort=False)["position_inconsistency"].mean()
        parts += ["", "Mean over judges: " + ", ".join(
            f"{c} {100 * v:.1f}%" for c, v in means.items()) + "."]
    if tie_probe is not None and len(tie_probe):
        t = tie_probe
        parts += ["", "## Tie probes", "", _markdown(pd.DataFrame({
            "judge": t["judge"], "condition": t["condition"],
            "languages": t["language_1"] + " / " + t["language_2"], "probes": t["n"],
            "ties": [_rate(*r) for r in t[["tie_share", "tie_share_ci_low",
                                           "tie_share_ci_high"]].values],
            "language_2 share of non-ties": [_rate(*r) for r in t[[
                "non_tie_language_2_share", "non_tie_ci_low", "non_tie_ci_high"]].values]}))]
    if audit is not None and len(audit):
        flagged = audit.loc[audit["flagged"]]
        counts = ", ".join(f"{c} {int(audit[c].sum())}" for c in
                           ["empty", "lost_numbers", "number_count_change", "shrinkage"])
        parts += ["", "## Translation audit", "",
                  f"{len(flagged)} of {len(audit)} fields flagged "
                  f"({len(flagged[['item', 'subset']].drop_duplicates())} items): {counts}."]
    return "\n".join(parts) + "\n"
