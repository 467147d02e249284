"""The judge card's redundancy and ranking on the results page: per language, how many
independent judges the panel is and what its majority gains over its best judge
(``card/redundancy.csv``), and the judges ranked by agreement with the reference with their
simultaneous rank sets (``card/ranking.csv``)."""
from __future__ import annotations

import pandas as pd

from .results_folder import PER_LANGUAGE, Results, col, table

REDUNDANCY_COLUMNS = [
    col("language", type="text"), col("effective_judges", "effective judges"),
    col("n_judges", "judges", "int"), col("error_correlation", "mean error correlation"),
    col("best_judge", "best judge", "text"), col("gain", "majority minus best judge"),
    col("gain_ci", "95% interval (measured coverage 0.93-0.95 from 40 tasks)", "interval",
        low="gain_low", high="gain_high"),
    col("gain_measure", "of", "text")]
RANKING_COLUMNS = [
    col("language", type="text"), col("rank", type="int"), col("judge", type="text"),
    col("measure", type="text"), col("estimate"),
    col("rank_set", "rank set (simultaneous over the language)", "interval", 0, "rank_low",
        "rank_high")]


def redundancy_summary(redundancy: pd.DataFrame) -> pd.DataFrame:
    """One row per language: the effective number of judges, the mean error correlation and
    the majority's gain in the lead measure over the best judge (kappa where there is one)."""
    rows = []
    for language, part in redundancy.groupby("language", sort=False):
        gains = part[part["measure"].str.startswith("majority_gain_")]
        lead = gains[~gains["measure"].str.endswith("percent_agreement")]
        gain = (lead if len(lead) else gains).head(1)
        panel = part[part["judge"] == "panel"].set_index("measure")
        pairs = part[(part["measure"] == "error_correlation") & (part["judge"] != "panel")]
        row = {"language": language,
               "effective_judges": panel["estimate"].get("effective_judges"),
               "error_correlation": panel["estimate"].get("error_correlation"),
               "n_judges": len(set(pairs["judge"]) | set(pairs["versus"]))}
        if len(gain):
            g = gain.iloc[0]
            row.update(best_judge=g["versus"], gain=g["estimate"], gain_low=g["ci_low"],
                       gain_high=g["ci_high"],
                       gain_measure=g["measure"].removeprefix("majority_gain_"))
        rows.append(row)
    return pd.DataFrame(rows)


def redundancy_tables(res: Results, name: str) -> list[dict]:
    """The compact tables of the card section (none where the files are absent or empty)."""
    tables = []
    source = f"{name}/card/redundancy.csv"
    redundancy = res.csv(source)
    if redundancy is not None and (redundancy["measure"] == "effective_judges").any():
        tables.append(table(f"{name}.card_redundancy", "How many independent judges? Error "
                            "correlation and the majority's gain, per language", source,
                            redundancy_summary(redundancy), REDUNDANCY_COLUMNS,
                            PER_LANGUAGE, {"language": ["language"]}))
    source = f"{name}/card/ranking.csv"
    ranking = res.csv(source)
    if ranking is not None and len(ranking):
        order = {v: i for i, v in enumerate(pd.unique(ranking["language"]))}
        ranking = ranking.assign(_o=ranking["language"].map(order)).sort_values(
            ["_o", "rank"], kind="stable").drop(columns="_o")
        tables.append(table(f"{name}.card_ranking", "Ranked by agreement with the reference, "
                            "per language", source, ranking, RANKING_COLUMNS, PER_LANGUAGE,
                            {"language": ["language"], "backbone": ["judge"]}))
    return tables
