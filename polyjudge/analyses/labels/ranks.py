"""Per language: the judged systems' ranks by their mean human label, each with a rank set
simultaneous over the language's systems, read off the Bonferroni-simultaneous intervals of
their pairwise differences (:func:`polyjudge.analyses.labels.estimates.differences`).

A system's rank set is ``[1 + #systems surely above it, S - #systems surely below it]``, where
"surely above" means the whole difference interval lies above zero. Whenever every difference
interval of the language holds at once, every system's true rank lies in its set, so the sets
hold jointly with at least the differences' simultaneous coverage (Klein, Wright and Wieczorek
2020; Mogstad, Romano, Shaikh and Wilke 2024, who call these the rank confidence sets from
simultaneous pairwise comparisons). Rank 1 is the highest mean.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

RANK_COLUMNS = ["language", "system", "estimator", "predictor", "estimate", "rank",
                "rank_low", "rank_high", "systems"]
"""The columns of ``labels/ranks.csv``."""
KEYS = ["language", "estimator", "predictor"]


def rank_sets(estimates: pd.DataFrame, differences: pd.DataFrame) -> pd.DataFrame:
    """The rank of every system with an interval (``human_only`` and ``ppi`` rows of
    ``estimates``) among its language's systems, and its simultaneous rank set from
    ``differences`` (:data:`RANK_COLUMNS`). Tied estimates share the best rank."""
    kept = estimates[estimates["estimator"].isin(["human_only", "ppi"])
                     & estimates["se"].notna()]
    if not len(kept):
        return pd.DataFrame(columns=RANK_COLUMNS)
    kept = kept.assign(predictor=kept["predictor"].fillna("").astype(str))[
        KEYS + ["system", "estimate"]].reset_index(drop=True)
    group = kept.groupby(KEYS, sort=False)
    systems = group["system"].transform("size").astype(int)
    rank = group["estimate"].rank(method="min", ascending=False).astype(int)
    above = np.zeros(len(kept), int)
    below = np.zeros(len(kept), int)
    if len(differences):
        pairs = differences.assign(predictor=differences["predictor"].fillna("").astype(str))
        first_higher = pairs["ci_low"].to_numpy(float) > 0
        first_lower = pairs["ci_high"].to_numpy(float) < 0
        where = pd.MultiIndex.from_frame(kept[KEYS + ["system"]].astype(str))
        # a row says "system minus versus": one side's "surely above" is the other's "below"
        for side, higher, lower in (("system", first_higher, first_lower),
                                    ("versus", first_lower, first_higher)):
            counted = pairs[KEYS].astype(str).assign(system=pairs[side].astype(str),
                                                     above=lower, below=higher)
            total = counted.groupby(KEYS + ["system"])[["above", "below"]].sum()
            total = total.reindex(where, fill_value=0)
            above += total["above"].to_numpy(int)
            below += total["below"].to_numpy(int)
    return kept.assign(rank=rank, rank_low=1 + above, rank_high=systems - below,
                       systems=systems)[RANK_COLUMNS]
