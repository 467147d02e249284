"""What changed between two results folders: beta shifts, rank changes, claim status changes.

Numbers count as changed beyond the tolerance the output snapshot uses across machines (relative
1e-9, absolute 1e-12; docs/outputs.md), so a rerun on another CPU shows no difference.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .results_folder import Results, col, table

RTOL, ATOL = 1e-9, 1e-12


def _changed(before: pd.Series, after: pd.Series) -> np.ndarray:
    a, b = before.to_numpy(dtype=float), after.to_numpy(dtype=float)
    same = np.isclose(a, b, rtol=RTOL, atol=ATOL) | (np.isnan(a) & np.isnan(b))
    return ~same


def beta_shifts(a: Results, b: Results, panel: str) -> pd.DataFrame:
    before, after = a.csv(f"{panel}/cbc/beta.csv"), b.csv(f"{panel}/cbc/beta.csv")
    if before is None or after is None:
        return pd.DataFrame(columns=["panel", "language", "backbone", "before", "after", "shift"])
    merged = before.merge(after, on=["language", "backbone"], suffixes=("_a", "_b"))
    merged = merged[_changed(merged["beta_a"], merged["beta_b"])]
    return pd.DataFrame({"panel": panel, "language": merged["language"],
                         "backbone": merged["backbone"], "before": merged["beta_a"],
                         "after": merged["beta_b"],
                         "shift": merged["beta_b"] - merged["beta_a"]})


def rank_changes(a: Results, b: Results, panel: str) -> pd.DataFrame:
    rows = []
    for relative in (f"{panel}/cbc/leaderboard.csv", f"{panel}/cbc/rankings.csv"):
        before, after = a.csv(relative), b.csv(relative)
        if before is None or after is None:
            continue
        merged = before.merge(after, on=["language", "backbone"], suffixes=("_a", "_b"))
        for stage in ("raw", "cbc"):
            key = f"rank_{stage}"
            moved = merged[merged[f"{key}_a"] != merged[f"{key}_b"]]
            rows += [{"panel": panel, "language": r["language"], "backbone": r["backbone"],
                      "rank": key, "before": int(r[f"{key}_a"]), "after": int(r[f"{key}_b"])}
                     for r in moved.to_dict("records")]
        break
    return pd.DataFrame(rows, columns=["panel", "language", "backbone", "rank", "before",
                                       "after"])


def status_changes(a: Results, b: Results) -> pd.DataFrame:
    before, after = a.csv("claims.csv"), b.csv("claims.csv")
    if before is None or after is None:
        return pd.DataFrame(columns=["id", "before", "after"])
    merged = before.merge(after, on="id", how="outer", suffixes=("_a", "_b"))
    merged = merged[merged["status_a"].fillna("(absent)") != merged["status_b"].fillna("(absent)")]
    return pd.DataFrame({"id": merged["id"], "before": merged["status_a"].fillna("(absent)"),
                         "after": merged["status_b"].fillna("(absent)")})


def run_diff(a: Results, b: Results, panels: list[str], names=("A", "B")) -> dict:
    """The compare page's ``diff``: three tables and the cells to outline in run B's tables."""
    betas = pd.concat([beta_shifts(a, b, p) for p in panels], ignore_index=True)
    ranks = pd.concat([rank_changes(a, b, p) for p in panels], ignore_index=True)
    statuses = status_changes(a, b)
    highlights: dict[str, list] = {}
    for r in betas.to_dict("records"):
        mark = {"match": {"language": r["language"], "backbone": r["backbone"]},
                "columns": ["beta"], "before": {"beta": r["before"]}}
        highlights.setdefault(f"{r['panel']}.beta", []).append(mark)
    for r in ranks.to_dict("records"):
        highlights.setdefault(f"{r['panel']}.leaderboard", []).append(
            {"match": {"language": r["language"], "backbone": r["backbone"]},
             "columns": [r["rank"]], "before": {r["rank"]: r["before"]}})
    for r in statuses.to_dict("records"):
        highlights.setdefault("claims", []).append(
            {"match": {"id": r["id"]}, "columns": ["status"], "before": {"status": r["before"]}})
    text = [col("panel", type="text"), col("language", type="text"),
            col("backbone", type="text")]
    tables = [
        table("diff.beta", "beta shifts", "cbc/beta.csv of both runs", betas,
              text + [col("before", "beta in run A", digits=4),
                      col("after", "beta in run B", digits=4), col("shift", digits=4)],
              filters={"cpanel": ["panel"]}),
        table("diff.ranks", "Rank changes", "cbc/leaderboard.csv (or rankings.csv) of both runs",
              ranks, text + [col("rank", type="text"), col("before", "rank in run A", "int"),
                             col("after", "rank in run B", "int")],
              filters={"cpanel": ["panel"]}),
        table("diff.claims", "Claims whose status changed", "claims.csv of both runs", statuses,
              [col("id", type="text"), col("before", "status in run A", type="text"),
               col("after", "status in run B", type="text")])]
    changed_cells = {p: list(zip(betas.loc[betas["panel"] == p, "language"],
                                 betas.loc[betas["panel"] == p, "backbone"])) for p in panels}
    return {"run_a": str(names[0]), "run_b": str(names[1]), "tables": tables,
            "highlights": highlights, "changed_cells": changed_cells,
            "counts": {"beta": len(betas), "ranks": len(ranks), "claims": len(statuses)},
            "tolerance": f"Numbers differ beyond relative {RTOL:g} and absolute {ATOL:g}."}
