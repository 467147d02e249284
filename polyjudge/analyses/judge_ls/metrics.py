"""Judge-LS metric tables: accuracy, language flips, position inconsistency, tie probes.

Every rate is a ratio over judgments or pairs, and its interval is item-clustered
(:mod:`.intervals`): the two answer orders of an item (and the (item, order) pairs of a flip
comparison, the two orders of a tie probe) count as one cluster, an item being one (item, subset).
Rows whose items hold one judgment each (per-order accuracy, position pairs) get exactly the
Wilson interval. A pooled row resting on a single item has no interval (NaN): one cluster gives
no variance estimate. Every table ends with n_items (items behind the row) and ci_method.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.stats

from .intervals import (
    cluster_robust_variance,
    clustered_mcnemar_p,
    clustered_wilson_interval,
    design_effect,
    mcnemar_exact_p,
)
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


CI_METHOD = "item_clustered"


def _gold_judgments(frame: pd.DataFrame) -> pd.DataFrame:
    data = _with_items(normalise_choices(frame))
    data = data.loc[data["gold"] != "Tie"]
    return data.assign(correct=data["valid"] & (data["choice"] == data["gold"]))


def _with_items(data: pd.DataFrame) -> pd.DataFrame:
    """Add ``_item``, the cluster of a judgment: one integer per (item, subset)."""
    return data.assign(_item=data.groupby(["item", "subset"], sort=False).ngroup())


def _item_sums(data: pd.DataFrame, keys: list[str], columns: dict):
    """Per (table row, item): the sums of ``columns`` (new name -> judgment column of integers).

    Returns ``(items, labels)``: items has ``_group`` (the table row, an integer), ``_item`` and
    the sums; labels has the ``keys`` values of each ``_group`` (its index). Grouping on one
    integer instead of the string keys keeps the large pooled tables fast.
    """
    group = data.groupby(keys, sort=False).ngroup().to_numpy()
    frame = pd.DataFrame({"_group": group, "_item": data["_item"].to_numpy()}
                         | {new: data[old].to_numpy(np.int64) for new, old in columns.items()})
    items = frame.groupby(["_group", "_item"], sort=False).sum().reset_index()
    first = ~pd.Series(group).duplicated().to_numpy()
    labels = data.loc[first, keys].set_axis(group[first]).sort_index()
    return items, labels


def _totals(items: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """One row per table row: its keys, the sums of the item counts, and the number of items."""
    grouped = items.drop(columns="_item").groupby("_group")
    totals = grouped.sum().assign(n_items=grouped.size())
    return labels.join(totals).rename_axis("_group").reset_index()


def _clustered(items: pd.DataFrame, value: str, weight: str, floor: bool = True) -> pd.DataFrame:
    """Per ``_group``: the CR1 variance of the ratio ``sum(value) / sum(weight)`` with items as
    clusters (items counted when weight > 0) and its design effect."""
    grouped = items.groupby("_group")
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = grouped[value].transform("sum") / grouped[weight].transform("sum")
    stats = (pd.DataFrame({"_group": items["_group"], "v": items[value], "w": items[weight],
                           "counted": items[weight] > 0,
                           "ss": (items[value] - rate * items[weight]) ** 2})
             .groupby("_group")
             .agg(v=("v", "sum"), w=("w", "sum"), n_items=("counted", "sum"), size=("w", "max"),
                  ss=("ss", "sum")))
    stats["variance"] = cluster_robust_variance(stats["ss"], stats["w"], stats["n_items"])
    with np.errstate(divide="ignore", invalid="ignore"):
        stats["deff"] = design_effect(stats["variance"], stats["v"] / stats["w"], stats["w"],
                                      stats["size"], floor)
    return stats


def _with_clustered_wilson(table: pd.DataFrame, items: pd.DataFrame, count: str, n: str,
                           rate: str, prefix: str, confidence: float, floor: bool = True
                           ) -> pd.DataFrame:
    """``rate = count / n`` with its item-clustered Wilson interval ``prefix_ci_low/high``
    (``floor``: never narrower than for independent judgments, see ``design_effect``)."""
    deff = _clustered(items, count, n, floor)["deff"].reindex(table["_group"]).to_numpy()
    low, high = clustered_wilson_interval(table[count], table[n], deff, confidence)
    with np.errstate(divide="ignore", invalid="ignore"):
        table[rate] = table[count] / table[n]
    table[f"{prefix}_ci_low"], table[f"{prefix}_ci_high"] = low, high
    return table


def _clustered_p(table: pd.DataFrame, items: pd.DataFrame, plus: str, minus: str) -> np.ndarray:
    """Durkalski's cluster-adjusted McNemar p of the item counts ``plus`` vs ``minus`` per table
    row, items as clusters."""
    d = items[plus] - items[minus]
    stats = (pd.DataFrame({"_group": items["_group"], "s": d, "ss": d**2}).groupby("_group").sum()
             .reindex(table["_group"]))
    return clustered_mcnemar_p(stats["s"].to_numpy(), stats["ss"].to_numpy())


def accuracy_table(frame: pd.DataFrame, by_order: bool = False, invalid_as_wrong: bool = False,
                   confidence: float = 0.95) -> pd.DataFrame:
    """Accuracy per judge x condition x subset (x order) on the gold 1/2 judgments.

    Columns: judge, condition, subset (``all`` pools the subsets), order (``all`` pools both;
    with ``by_order`` also ``original`` and ``swapped`` rows), n (judgments in the denominator),
    n_invalid (unparseable), n_correct, strict_accuracy (a tie is wrong) with item-clustered
    Wilson strict_ci_low/high, tie_half_accuracy (a tie scores 1/2) with a normal interval
    ``mean -/+ z se`` clipped to [0, 1], position_a_rate (share of decisive verdicts naming the
    answer shown first: 0.5 = no position preference when orders are balanced), tie_rate (ties /
    valid verdicts), n_items, ci_method. Unparseable verdicts are left out of n unless
    ``invalid_as_wrong`` (then they count as wrong, as upstream LLMBar statistics do).

    Intervals: the two orders of an item are correlated (the judge sees the same content), so
    pooled-order rows use items as clusters: the strict interval is Wilson at the effective
    sample size n / deff, ``se`` of the tie-half interval is the CR1 cluster-robust standard error
    (both never narrower than for independent judgments; :mod:`.intervals`). Per-order rows have
    one judgment per item and get the plain Wilson interval and ``se = s / sqrt(n)`` (s the
    sample SD of the 0 / 0.5 / 1 scores). In the synthetic protocol the pooled 95% intervals
    cover the planted accuracy about 95% of the time; treating the judgments as independent (as
    Judge-LS does) covered about 90%.
    """
    data = _gold_judgments(frame)
    data = data.assign(
        tie=data["choice"] == "Tie",
        shown_first=(data["choice"] == np.where(data["order"] == "original", "1", "2")),
        decisive=data["choice"].isin(["1", "2"]),
        total=1)
    data = data.assign(counted=data["total"] if invalid_as_wrong else data["valid"],
                       half_points=2 * data["correct"] + data["tie"])
    data = _pool_subsets(data)
    data = pd.concat([data.assign(order=ALL)] + ([data] if by_order else []), ignore_index=True)
    keys = ["judge", "condition", "subset", "order"]
    items, labels = _item_sums(data, keys, {
        "n_total": "total", "n_valid": "valid", "n": "counted", "n_correct": "correct",
        "half_points": "half_points", "n_tie": "tie", "n_a": "shown_first",
        "n_decisive": "decisive"})
    table = _totals(items, labels)
    table.insert(5, "n", table.pop("n"))
    table.insert(6, "n_invalid", table.pop("n_total") - table["n_valid"])
    table.insert(7, "n_correct", table.pop("n_correct"))
    table = _with_clustered_wilson(table, items, "n_correct", "n", "strict_accuracy", "strict",
                                   confidence)
    z = scipy.stats.norm.isf((1 - confidence) / 2)
    n = table["n"].astype(float)
    stats = _clustered(items, "half_points", "n").reindex(table["_group"])
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = table["half_points"] / (2 * n)
        independent = ((table["n_correct"] + 0.25 * table["n_tie"] - n * mean**2) / (n - 1)
                       ).clip(lower=0) / n
        variance = np.where(stats["size"].to_numpy() <= 1, independent,
                            np.maximum(stats["variance"].to_numpy() / 4, independent))
        half = z * np.sqrt(variance)
        table["tie_half_accuracy"] = mean
        table["tie_half_ci_low"] = (mean - half).clip(0, 1)
        table["tie_half_ci_high"] = (mean + half).clip(0, 1)
        table["position_a_rate"] = table["n_a"] / table["n_decisive"]
        table["tie_rate"] = table["n_tie"] / table["n_valid"]
    table = table.drop(columns=["_group", "n_valid", "n_tie", "n_a", "n_decisive", "half_points"])
    table["n_items"] = table.pop("n_items")
    table["ci_method"] = CI_METHOD
    return _sorted(table, {"judge": data["judge"], "condition": data["condition"],
                           "subset": data["subset"], "order": ORDERS})


def _paired(left: pd.DataFrame, right: pd.DataFrame, on: list[str]) -> pd.DataFrame:
    """Inner join of two judgment sets; ``pair_valid`` when both verdicts parse."""
    pairs = left.merge(right[on + ["choice", "valid", "correct"]], on=on, suffixes=("", "_ref"))
    return pairs.assign(pair_valid=pairs["valid"] & pairs["valid_ref"])


def flip_table(frame: pd.DataFrame, reference: str = "en",
               confidence: float = 0.95) -> pd.DataFrame:
    """Language-invariance flips of each target condition against ``reference``
    (docs/methods.md section 8).

    Judgments are paired within a judge on (item, subset, order); a pair counts when both verdicts
    parse (the others are n_invalid_pairs). Columns: judge, reference, target, subset (``all``
    pools), n_pairs, n_invalid_pairs, n_flips, flip_rate (normalised choices differ) with
    flip_ci_low/high, n_gold_flips, gold_flip_rate (strict correctness differs) with
    gold_flip_ci_low/high, n_discordant_b (reference correct, target wrong), n_discordant_c
    (reference wrong, target correct), mcnemar_p (exact two-sided binomial on b vs c, pairs as
    independent, as in Judge-LS; 1 if none), mcnemar_cluster_p (Durkalski's cluster-adjusted
    McNemar, items as clusters), n_items, ci_method.

    As in Judge-LS, both orders' pairs of an item count as pairs; they are correlated, so the
    intervals are item-clustered Wilson intervals (:mod:`.intervals`; within one order they are
    the plain Wilson interval).
    """
    data = _gold_judgments(frame)
    present = pd.unique(data["condition"])
    if reference not in present:
        raise ValueError(f"reference condition {reference!r} is not among the conditions "
                         f"{list(present)}")
    ref = data.loc[data["condition"] == reference]
    target = data.loc[data["condition"] != reference]
    lacking = sorted(set(pd.unique(target["judge"])) - set(pd.unique(ref["judge"])))
    if lacking:
        raise ValueError(f"judge(s) {lacking} have no judgments in the reference condition "
                         f"{reference!r}")
    pairs = _paired(target, ref, ["judge", "item", "subset", "order"])
    valid = pairs["pair_valid"]
    pairs = pairs.assign(flip=valid & (pairs["choice"] != pairs["choice_ref"]),
                         b=valid & pairs["correct_ref"] & ~pairs["correct"],
                         c=valid & ~pairs["correct_ref"] & pairs["correct"], all=1)
    pairs = pairs.assign(gold_flip=pairs["b"] | pairs["c"])
    pairs = _pool_subsets(pairs).rename(columns={"condition": "target"})
    keys = ["judge", "target", "subset"]
    items, labels = _item_sums(pairs, keys, {
        "n_pairs": "pair_valid", "n_all": "all", "n_flips": "flip", "n_gold_flips": "gold_flip",
        "n_discordant_b": "b", "n_discordant_c": "c"})
    table = _totals(items, labels)
    table.insert(2, "reference", reference)
    table["n_invalid_pairs"] = table.pop("n_all") - table["n_pairs"]
    table = _with_clustered_wilson(table, items, "n_flips", "n_pairs", "flip_rate", "flip",
                                   confidence)
    table = _with_clustered_wilson(table, items, "n_gold_flips", "n_pairs", "gold_flip_rate",
                                   "gold_flip", confidence)
    table["mcnemar_p"] = mcnemar_exact_p(table["n_discordant_b"], table["n_discordant_c"])
    table["mcnemar_cluster_p"] = _clustered_p(table, items, "n_discordant_b",
                                               "n_discordant_c")
    table["ci_method"] = CI_METHOD
    columns = ["judge", "reference", "target", "subset", "n_pairs", "n_invalid_pairs", "n_flips",
               "flip_rate", "flip_ci_low", "flip_ci_high", "n_gold_flips", "gold_flip_rate",
               "gold_flip_ci_low", "gold_flip_ci_high", "n_discordant_b", "n_discordant_c",
               "mcnemar_p", "mcnemar_cluster_p", "n_items", "ci_method"]
    return _sorted(table[columns], {"judge": data["judge"], "target": data["condition"],
                                    "subset": data["subset"]})


def position_table(frame: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Position inconsistency and first-seat preference per judge x condition x subset.

    Pairs are the two orders of one (judge, condition, item, subset), counted when both verdicts
    parse (the others are n_invalid_pairs); Tie vs Tie is consistent. Columns: judge, condition,
    subset (``all`` pools), n (valid pairs), n_invalid_pairs, n_inconsistent,
    position_inconsistency with position_ci_low/high (an item gives one pair, so the
    item-clustered interval is the plain Wilson interval here); then the first seat:
    n_decisive (verdicts naming an answer, both orders), n_first_seat (those naming the answer
    shown first), first_seat_rate (0.5: no preference; ``position_a_rate`` of the accuracy
    table) with its item-clustered Wilson first_seat_ci_low/high, first_seat_p_unclustered
    (exact two-sided binomial test of 1/2 with verdicts as independent, which an item's two
    orders are not: named apart so that no one reads it as the clustered test) and
    first_seat_cluster_p (items as clusters, as ``mcnemar_cluster_p``: the test to read);
    n_both_first / n_both_second (decisive pairs whose verdict follows the seat: the first, or
    the second, in both orders) and position_mcnemar_p (exact McNemar test of the two, 1 if
    none); n_items, ci_method.
    """
    data = _gold_judgments(frame)
    on = ["judge", "condition", "item", "subset"]
    pairs = _paired(data.loc[data["order"] == "swapped"],
                    data.loc[data["order"] == "original"], on)
    valid = pairs["pair_valid"]
    # normalised choices: content 1 is shown first in the original order, content 2 swapped
    pairs = pairs.assign(
        inconsistent=valid & (pairs["choice"] != pairs["choice_ref"]), all=1,
        both_first=valid & (pairs["choice_ref"] == "1") & (pairs["choice"] == "2"),
        both_second=valid & (pairs["choice_ref"] == "2") & (pairs["choice"] == "1"))
    keys = ["judge", "condition", "subset"]
    items, labels = _item_sums(_pool_subsets(pairs), keys, {
        "n": "pair_valid", "n_all": "all", "n_inconsistent": "inconsistent",
        "n_both_first": "both_first", "n_both_second": "both_second"})
    table = _totals(items, labels)
    table.insert(5, "n_invalid_pairs", table.pop("n_all") - table["n"])
    table = _with_clustered_wilson(table, items, "n_inconsistent", "n", "position_inconsistency",
                                   "position", confidence).drop(columns="_group")
    # every group of pairs has its judgments, so the inner merge keeps every row
    table = table.merge(_first_seat(data, keys, confidence), on=keys)
    table["position_mcnemar_p"] = mcnemar_exact_p(table["n_both_first"], table["n_both_second"])
    columns = [*keys, "n", "n_invalid_pairs", "n_inconsistent", "position_inconsistency",
               "position_ci_low", "position_ci_high", "n_decisive", "n_first_seat",
               "first_seat_rate", "first_seat_ci_low", "first_seat_ci_high",
               "first_seat_p_unclustered", "first_seat_cluster_p", "n_both_first",
               "n_both_second", "position_mcnemar_p", "n_items"]
    table = table[columns].assign(ci_method=CI_METHOD)
    return _sorted(table, {"judge": data["judge"], "condition": data["condition"],
                           "subset": data["subset"]})


def _first_seat(data: pd.DataFrame, keys: list[str], confidence: float) -> pd.DataFrame:
    """Per ``keys``: decisive verdicts, those for the answer shown first, their rate with its
    item-clustered Wilson interval, and the binomial and item-clustered tests of 1/2."""
    decisive = data["choice"].isin(["1", "2"])
    first = data["choice"] == np.where(data["order"] == "original", "1", "2")
    judged = _pool_subsets(data.assign(decisive=decisive, first=first & decisive,
                                       second=decisive & ~first))
    items, labels = _item_sums(judged, keys, {"n_decisive": "decisive", "n_first_seat": "first",
                                              "_second": "second"})
    table = _totals(items, labels)
    table = _with_clustered_wilson(table, items, "n_first_seat", "n_decisive", "first_seat_rate",
                                   "first_seat", confidence, floor=False)
    table["first_seat_p_unclustered"] = mcnemar_exact_p(table["n_first_seat"], table["_second"])
    table["first_seat_cluster_p"] = _clustered_p(table, items, "n_first_seat", "_second")
    return table[[*keys, "n_decisive", "n_first_seat", "first_seat_rate", "first_seat_ci_low",
                  "first_seat_ci_high", "first_seat_p_unclustered", "first_seat_cluster_p"]]


def tie_probe_table(frame: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Language preference on translation-equivalent tie probes (gold Tie), per judge x condition.

    A probe shows an answer and its translation; ``probe_language_1/2`` give the language of
    output 1 / output 2 (original indices), so a normalised choice 1 is a win for
    probe_language_1. Each (judge, condition, language pair) is one row, the pair's languages
    sorted alphabetically as language_1 < language_2 (en < zh), pooled over subsets and orders.
    Columns: judge, condition, language_1, language_2, n (valid), n_invalid, n_language_1_wins,
    n_language_2_wins, n_ties, language_1_share, language_2_share, tie_share (shares of n) with
    tie_share_ci_low/high, non_tie_language_2_share (language_2 wins / non-ties) with
    non_tie_ci_low/high, non_tie_p (exact two-sided binomial test of that share = 1/2, verdicts
    as independent), non_tie_cluster_p (the same question by Durkalski's cluster-adjusted test,
    items as clusters), n_items, ci_method. The two orders of a probe are one cluster: the
    intervals are item-clustered Wilson intervals (:mod:`.intervals`). Empty when there are no
    tie probes.
    """
    data = _with_items(normalise_choices(frame))
    data = data.loc[data["gold"] == "Tie"]
    if data.empty:
        return pd.DataFrame(columns=["judge", "condition", "language_1", "language_2", "n"])
    lang1, lang2 = data["probe_language_1"].astype(str), data["probe_language_2"].astype(str)
    winner = np.select([data["choice"] == "1", data["choice"] == "2"], [lang1, lang2], default="")
    first = (lang1 <= lang2).to_numpy()
    low, high = np.where(first, lang1, lang2), np.where(first, lang2, lang1)
    data = data.assign(language_1=low, language_2=high,
                       win_1=data["valid"] & (winner == low),
                       win_2=data["valid"] & (winner == high),
                       tie=data["choice"] == "Tie", all=1)
    keys = ["judge", "condition", "language_1", "language_2"]
    items, labels = _item_sums(data, keys, {
        "n": "valid", "n_all": "all", "n_language_1_wins": "win_1", "n_language_2_wins": "win_2",
        "n_ties": "tie"})
    items["n_non_tie"] = items["n_language_1_wins"] + items["n_language_2_wins"]
    table = _totals(items, labels)
    table.insert(6, "n_invalid", table.pop("n_all") - table["n"])
    with np.errstate(divide="ignore", invalid="ignore"):
        table["language_1_share"] = table["n_language_1_wins"] / table["n"]
        table["language_2_share"] = table["n_language_2_wins"] / table["n"]
    table = _with_clustered_wilson(table, items, "n_ties", "n", "tie_share", "tie_share",
                                   confidence)
    table = _with_clustered_wilson(table, items, "n_language_2_wins", "n_non_tie",
                                   "non_tie_language_2_share", "non_tie", confidence)
    table["non_tie_p"] = mcnemar_exact_p(table["n_language_1_wins"], table["n_language_2_wins"])
    table["non_tie_cluster_p"] = _clustered_p(table, items, "n_language_2_wins",
                                                "n_language_1_wins")
    table["n_items"] = table.pop("n_items")
    table["ci_method"] = CI_METHOD
    return _sorted(table.drop(columns=["_group", "n_non_tie"]),
                   {"judge": data["judge"], "condition": data["condition"]})
