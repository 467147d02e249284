"""Judge-LS metric tables: accuracy, language flips, position inconsistency, tie probes."""
from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.stats

from .intervals import mcnemar_exact_p, wilson_interval
from .verdicts import ALL, ORDERS, normalise_choices


def _pool_subsets(data: pd.DataFrame) -> pd.DataFrame:
    """Rows once per subset and once more under subset ``all``."""
    return pd.concat([data, data.assign(subset=ALL)], ignore_index=True)


def _sorted(table: pd.DataFrame, orders: dict) -> pd.DataFrame:
    """Sort rows by the label order given per column (first appearance); ``all`` comes last."""
    rank = {col: {label: i for i, label in enumerate(pd.unique(pd.Series(labels)))}
            for col, labels in orders.items()}
    key = lambda s: s.map(rank[s.name]).fillna(len(rank[s.name]))
    return table.sort_values(list(orders), key=key, kind="stable").reset_index(drop=True)


def _gold_judgments(frame: pd.DataFrame) -> pd.DataFrame:
    data = normalise_choices(frame)
    data = data.loc[data["gold"] != "Tie"]
    return data.assign(correct=data["valid"] & (data["choice"] == data["gold"]))


def _with_wilson(table: pd.DataFrame, count: str, n: str, rate: str, prefix: str,
                 confidence: float) -> pd.DataFrame:
    low, high = wilson_interval(table[count], table[n], confidence)
    with np.errstate(divide="ignore", invalid="ignore"):
        table[rate] = table[count] / table[n]
    table[f"{prefix}_ci_low"], table[f"{prefix}_ci_high"] = low, high
    return table


def accuracy_table(frame: pd.DataFrame, by_order: bool = False, invalid_as_wrong: bool = False,
                   confidence: float = 0.95) -> pd.DataFrame:
    """Accuracy per judge x condition x subset (x order) on the gold 1/2 judgments.

    Columns: judge, condition, subset (``all`` pools the subsets), order (``all`` pools both;
    with ``by_order`` also ``original`` and ``swapped`` rows), n (judgments in the denominator),
    n_invalid (unparseable), n_correct, strict_accuracy (a tie is wrong) with Wilson
    strict_ci_low/high, tie_half_accuracy (a tie scores 1/2) with a normal interval
    ``mean -/+ z s / sqrt(n)`` (s the sample SD of the 0 / 0.5 / 1 scores, clipped to [0, 1]),
    position_a_rate (share of decisive verdicts naming the answer shown first: 0.5 = no position
    preference when orders are balanced) and tie_rate (ties / valid verdicts).
    Unparseable verdicts are left out of n unless ``invalid_as_wrong`` (then they count as wrong,
    as upstream LLMBar statistics do). Intervals treat judgments as independent (as Judge-LS
    does); the two orders of an item are correlated, so pooled-order intervals run somewhat
    narrow (simulated 95% coverage about 90%); per-order rows are exact in that respect.
    """
    data = _gold_judgments(frame)
    data = data.assign(
        tie=data["choice"] == "Tie",
        shown_first=(data["choice"] == np.where(data["order"] == "original", "1", "2")),
        decisive=data["choice"].isin(["1", "2"]))
    data = _pool_subsets(data)
    data = pd.concat([data.assign(order=ALL)] + ([data] if by_order else []), ignore_index=True)
    table = (data.groupby(["judge", "condition", "subset", "order"], sort=False)
             .agg(n_total=("valid", "size"), n_valid=("valid", "sum"), n_correct=("correct", "sum"),
                  n_tie=("tie", "sum"), n_a=("shown_first", "sum"), n_decisive=("decisive", "sum"))
             .reset_index())
    table.insert(4, "n", table["n_total"] if invalid_as_wrong else table["n_valid"])
    table.insert(5, "n_invalid", table["n_total"] - table["n_valid"])
    table = _with_wilson(table, "n_correct", "n", "strict_accuracy", "strict", confidence)
    z = scipy.stats.norm.isf((1 - confidence) / 2)
    n = table["n"].astype(float)
    mean = (table["n_correct"] + 0.5 * table["n_tie"]) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        var = (table["n_correct"] + 0.25 * table["n_tie"] - n * mean**2) / (n - 1)
        half = z * np.sqrt(var.clip(lower=0) / n)
        table["tie_half_accuracy"] = mean
        table["tie_half_ci_low"] = (mean - half).clip(0, 1)
        table["tie_half_ci_high"] = (mean + half).clip(0, 1)
        table["position_a_rate"] = table["n_a"] / table["n_decisive"]
        table["tie_rate"] = table["n_tie"] / table["n_valid"]
    table = table.drop(columns=["n_total", "n_valid", "n_tie", "n_a", "n_decisive"])
    return _sorted(table, {"judge": data["judge"], "condition": data["condition"],
                           "subset": data["subset"], "order": ORDERS})


def _paired(left: pd.DataFrame, right: pd.DataFrame, on: list[str]) -> pd.DataFrame:
    """Inner join of two judgment sets; ``pair_valid`` when both verdicts parse."""
    pairs = left.merge(right[on + ["choice", "valid", "correct"]], on=on, suffixes=("", "_ref"))
    return pairs.assign(pair_valid=pairs["valid"] & pairs["valid_ref"])


def flip_table(frame: pd.DataFrame, reference: str = "en", confidence: float = 0.95) -> pd.DataFrame:
    """Language-invariance flips of each target condition against ``reference`` (METHODS 8).

    Judgments are paired within a judge on (item, subset, order); a pair counts when both verdicts
    parse (the others are n_invalid_pairs). Columns: judge, reference, target, subset (``all``
    pools), n_pairs, n_invalid_pairs, n_flips, flip_rate (normalised choices differ) with Wilson
    flip_ci_low/high, n_gold_flips, gold_flip_rate (strict correctness differs) with Wilson
    gold_flip_ci_low/high, n_discordant_b (reference correct, target wrong), n_discordant_c
    (reference wrong, target correct), mcnemar_p (exact two-sided binomial on b vs c; 1 if none).
    As in Judge-LS, both orders' pairs of an item count as separate pairs; they are correlated,
    so the intervals run somewhat narrow (simulated 95% coverage about 91%; 95% within one order).
    """
    data = _gold_judgments(frame)
    present = pd.unique(data["condition"])
    if reference not in present:
        raise ValueError(f"reference condition {reference!r} is not among the conditions "
                         f"{list(present)}")
    ref, target = data.loc[data["condition"] == reference], data.loc[data["condition"] != reference]
    lacking = sorted(set(pd.unique(target["judge"])) - set(pd.unique(ref["judge"])))
    if lacking:
        raise ValueError(f"judge(s) {lacking} have no judgments in the reference condition "
                         f"{reference!r}")
    pairs = _paired(target, ref, ["judge", "item", "subset", "order"])
    valid = pairs["pair_valid"]
    pairs = pairs.assign(flip=valid & (pairs["choice"] != pairs["choice_ref"]),
                         b=valid & pairs["correct_ref"] & ~pairs["correct"],
                         c=valid & ~pairs["correct_ref"] & pairs["correct"])
    table = (_pool_subsets(pairs).rename(columns={"condition": "target"})
             .groupby(["judge", "target", "subset"], sort=False)
             .agg(n_pairs=("pair_valid", "sum"), n_all=("pair_valid", "size"),
                  n_flips=("flip", "sum"), n_discordant_b=("b", "sum"),
                  n_discordant_c=("c", "sum"))
             .reset_index())
    table.insert(1, "reference", reference)
    table.insert(5, "n_invalid_pairs", table.pop("n_all") - table["n_pairs"])
    table = _with_wilson(table, "n_flips", "n_pairs", "flip_rate", "flip", confidence)
    table["n_gold_flips"] = table["n_discordant_b"] + table["n_discordant_c"]
    table = _with_wilson(table, "n_gold_flips", "n_pairs", "gold_flip_rate", "gold_flip", confidence)
    table["mcnemar_p"] = mcnemar_exact_p(table["n_discordant_b"], table["n_discordant_c"])
    columns = ["judge", "reference", "target", "subset", "n_pairs", "n_invalid_pairs", "n_flips",
               "flip_rate", "flip_ci_low", "flip_ci_high", "n_gold_flips", "gold_flip_rate",
               "gold_flip_ci_low", "gold_flip_ci_high", "n_discordant_b", "n_discordant_c",
               "mcnemar_p"]
    return _sorted(table[columns], {"judge": data["judge"], "target": data["condition"],
                                    "subset": data["subset"]})


def position_table(frame: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Position inconsistency per judge x condition x subset: choice(original) != choice(swapped).

    Pairs are the two orders of one (judge, condition, item, subset), counted when both verdicts
    parse (the others are n_invalid_pairs); Tie vs Tie is consistent. Columns: judge, condition,
    subset (``all`` pools), n (valid pairs), n_invalid_pairs, n_inconsistent,
    position_inconsistency with Wilson position_ci_low/high.
    """
    data = _gold_judgments(frame)
    on = ["judge", "condition", "item", "subset"]
    pairs = _paired(data.loc[data["order"] == "swapped"],
                    data.loc[data["order"] == "original"], on)
    pairs = pairs.assign(inconsistent=pairs["pair_valid"] & (pairs["choice"] != pairs["choice_ref"]))
    table = (_pool_subsets(pairs).groupby(["judge", "condition", "subset"], sort=False)
             .agg(n=("pair_valid", "sum"), n_all=("pair_valid", "size"),
                  n_inconsistent=("inconsistent", "sum"))
             .reset_index())
    table.insert(4, "n_invalid_pairs", table.pop("n_all") - table["n"])
    table = _with_wilson(table, "n_inconsistent", "n", "position_inconsistency", "position",
                         confidence)
    return _sorted(table, {"judge": data["judge"], "condition": data["condition"],
                           "subset": data["subset"]})


def tie_probe_table(frame: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Language preference on translation-equivalent tie probes (gold Tie), per judge x condition.

    A probe shows an answer and its translation; ``probe_language_1/2`` give the language of
    output 1 / output 2 (original indices), so a normalised choice 1 is a win for
    probe_language_1. Each (judge, condition, language pair) is one row, the pair's languages
    sorted alphabetically as language_1 < language_2 (en < zh), pooled over subsets and orders.
    Columns: judge, condition, language_1, language_2, n (valid), n_invalid, n_language_1_wins,
    n_language_2_wins, n_ties, language_1_share, language_2_share, tie_share (shares of n) with
    Wilson tie_share_ci_low/high, non_tie_language_2_share (language_2 wins / non-ties) with
    Wilson non_tie_ci_low/high, and non_tie_p (exact two-sided binomial test of that share = 1/2).
    Empty when there are no tie probes.
    """
    data = normalise_choices(frame)
    data = data.loc[data["gold"] == "Tie"]
    if data.empty:
        return pd.DataFrame(columns=["judge", "condition", "language_1", "language_2", "n"])
    lang1, lang2 = data["probe_language_1"].astype(str), data["probe_language_2"].astype(str)
    winner = np.select([data["choice"] == "1", data["choice"] == "2"], [lang1, lang2], default="")
    first = (lang1 <= lang2).to_numpy()
    low, high = np.where(first, lang1, lang2), np.where(first, lang2, lang1)
    data = data.assign(language_1=low, language_2=high,
                       win_1=data["valid"] & (winner == low), win_2=data["valid"] & (winner == high),
                       tie=data["choice"] == "Tie")
    table = (data.groupby(["judge", "condition", "language_1", "language_2"], sort=False)
             .agg(n=("valid", "sum"), n_all=("valid", "size"), n_language_1_wins=("win_1", "sum"),
                  n_language_2_wins=("win_2", "sum"), n_ties=("tie", "sum"))
             .reset_index())
    table.insert(5, "n_invalid", table.pop("n_all") - table["n"])
    with np.errstate(divide="ignore", invalid="ignore"):
        table["language_1_share"] = table["n_language_1_wins"] / table["n"]
        table["language_2_share"] = table["n_language_2_wins"] / table["n"]
    table = _with_wilson(table, "n_ties", "n", "tie_share", "tie_share", confidence)
    table["n_non_tie"] = table["n_language_1_wins"] + table["n_language_2_wins"]
    table = _with_wilson(table, "n_language_2_wins", "n_non_tie", "non_tie_language_2_share",
                         "non_tie", confidence)
    table["non_tie_p"] = mcnemar_exact_p(table["n_language_1_wins"], table["n_language_2_wins"])
    return _sorted(table.drop(columns="n_non_tie"),
                   {"judge": data["judge"], "condition": data["condition"]})
