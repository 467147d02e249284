"""What "first" means on the card: the judges ranked by their agreement with the reference in
each language, with rank sets simultaneous over the language (docs/methods.md section 11).

The ranked measure is the card's lead (:func:`~polyjudge.analyses.card.headline`: kappa, or the
accuracy where the reference is one answer for every item). The rank sets are those of the
leaderboard (:func:`polyjudge.analyses.leaderboard.rank_sets`, Mogstad, Romano, Shaikh and
Wilke 2024): the paired differences of the judges' agreement over the same cluster-bootstrap
replicates as the card's intervals, with one max-|t| critical value over all pairs of judges of
the language, so all of a language's sets hold the judges' true ranks together at the level.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...cbc.estimator import rank_by_count
from ..leaderboard import rank_sets
from .agreement import ALL_LANGUAGES, reference_agreement

COLUMNS = ["language", "judge", "measure", "estimate", "ci_low", "ci_high", "rank",
           "rank_low", "rank_high", "n_judges", "n_items", "n_clusters"]
"""The columns of ``card/ranking.csv``."""

LEAD = ("cohen_kappa", "cohen_kappa_quadratic", "percent_agreement")
"""The measures a ranking may use, in order of preference (the card's lead measure)."""


def rank_by_agreement(table: pd.DataFrame, per_language: dict, languages,
                      confidence: float = 0.95, judges=None) -> pd.DataFrame:
    """Rank the judges of ``table`` (rows of :func:`reference_agreement`) within each language
    by the lead measure, 1 = best (ties share the better rank), with the simultaneous rank set
    ``[rank_low, rank_high]`` from the replicates ``per_language[judge, measure]`` (``R x L``,
    the same draws as the intervals). ``judges``: the judges to rank (default every judge of
    ``table``). Judges without a finite estimate in a language are not ranked there; without
    replicates the set is empty (NaN)."""
    against = table[(table["versus"] == "reference") & (table["language"] != ALL_LANGUAGES)]
    if judges is not None:
        against = against[against["judge"].isin(list(judges))]
    measure = next((m for m in LEAD if (against["measure"] == m).any()), None)
    if measure is None:
        return pd.DataFrame(columns=COLUMNS)
    rows = against[against["measure"] == measure]
    judges = list(pd.unique(rows["judge"]))
    point = (rows.pivot(index="language", columns="judge", values="estimate")
             .reindex(index=list(languages), columns=judges).to_numpy(float))
    draws = None
    if per_language and all((j, measure) in per_language for j in judges):
        draws = np.stack([per_language[j, measure] for j in judges], axis=-1)  # R x L x J
    out = []
    for l, language in enumerate(languages):
        keep = np.flatnonzero(np.isfinite(point[l]))
        if len(keep) == 0:
            continue
        ranks = rank_by_count(point[l, keep])
        low = high = np.full(len(keep), np.nan)
        if draws is not None and len(keep) > 1:
            low, high = rank_sets(point[l, keep][None], draws[:, l:l + 1, keep], confidence)
            low, high = low[0], high[0]
        elif draws is not None:
            low = high = np.ones(1)
        for i, j in enumerate(keep):
            row = rows[(rows["language"] == language) & (rows["judge"] == judges[j])].iloc[0]
            out.append({"language": language, "judge": judges[j], "measure": measure,
                        "estimate": point[l, j], "ci_low": row["ci_low"],
                        "ci_high": row["ci_high"], "rank": int(ranks[i]),
                        "rank_low": low[i], "rank_high": high[i], "n_judges": len(keep),
                        "n_items": int(row["n_items"]), "n_clusters": int(row["n_clusters"])})
    return pd.DataFrame(out, columns=COLUMNS)


def ranking(verdicts: pd.DataFrame, reference: pd.Series, level: str = "nominal",
            replicates: int = 1000, seed: int = 0, confidence: float = 0.95, languages=None,
            judges=None) -> pd.DataFrame:
    """:func:`rank_by_agreement` of :func:`reference_agreement` on the same arguments."""
    languages = list(languages) if languages is not None else list(
        pd.unique(verdicts["language"]))
    table, per_language = reference_agreement(verdicts, reference, level, replicates, seed,
                                              confidence, languages, judges)
    return rank_by_agreement(table[table["n_items"] > 0], per_language, languages,
                             confidence)
