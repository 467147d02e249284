"""The verdict of a Judge-LS panel, from its ``judge_ls/`` tables: the most accurate judge in
the reference condition against the next (``accuracy.csv``), how often switching from the
reference condition changes a verdict (``flips.csv``) and how many judge x condition cells show
a significant position bias (``position.csv``). Cells without a usable judgment are named, with
their calls' outcomes where the collection counted them (``collect/status.csv``), and left out,
never counted as 0; rates equal within the results' precision are a tie, never a winner, and a
range never runs from a cell to itself.
"""
from __future__ import annotations

import pandas as pd

from .meaning import at_top, names, tied, unusable_outcomes
from .results_folder import Results

ALL = "all"  # the pooled rows of the Judge-LS tables (subset, order)
FDR = 0.05  # the Judge-LS counts' false discovery rate, as the CBC panels' reversal tests


def _discoveries(p_values: pd.Series) -> int:
    """How many of ``p_values`` are significant at false discovery rate :data:`FDR`
    (Benjamini-Hochberg over these tests): a count over dozens of cells is not inflated by
    testing each at 5%."""
    import scipy.stats  # here: only a Judge-LS page counts tests

    if not len(p_values):
        return 0
    return int((scipy.stats.false_discovery_control(p_values.to_numpy(float)) <= FDR).sum())


def _pct(row, value: str, low: str, high: str, decimals: int = 1) -> str:
    """A rate as the page's Judge-LS summary writes it: percent, one decimal, interval."""
    return (f"{100 * row[value]:.{decimals}f}% [{100 * row[low]:.{decimals}f}, "
            f"{100 * row[high]:.{decimals}f}]")


def _apart(a, b, value: str) -> int:
    """Decimals that show two rates that differ (beyond :data:`.meaning.RTOL`) as different."""
    decimals = 1
    while decimals < 4 and f"{100 * a[value]:.{decimals}f}" == f"{100 * b[value]:.{decimals}f}":
        decimals += 1
    return decimals


def _extreme(frame: pd.DataFrame, value: str, best, rate, column: str) -> str:
    """The lowest (``best`` min) or highest rate with its cell, and how many more cells share
    it: ``54.0% [52.6, 55.4] (judge_b, en)``, ``... (judge_b, en, and 2 more)``."""
    cells = at_top(frame, value, best)
    first = cells.iloc[0]
    more = f", and {len(cells) - 1} more" if len(cells) > 1 else ""
    return f"{_pct(first, *rate)} ({first['judge']}, {first[column]}{more})"


def _everywhere(frame: pd.DataFrame, rate) -> str | None:
    """``100.0% [67.6, 100.0] in each of the 2 judge x condition cells`` when every row has the
    same rate (None otherwise): a range from a value to itself would name one cell twice."""
    value = rate[0]
    if len(frame) < 2 or not tied(frame[value].min(), frame[value].max()):
        return None
    shown = {_pct(row, *rate) for _, row in frame.iterrows()}
    return ((shown.pop() if len(shown) == 1 else f"{100 * frame[value].iloc[0]:.1f}%")
            + f" in each of the {len(frame)} judge x condition cells")


def _pooled(frame: pd.DataFrame | None) -> pd.DataFrame | None:
    """The rows pooled over subsets (and, for accuracy, orders), judges as text."""
    if frame is None:
        return None
    for column in ("subset", "order"):
        if column in frame:
            frame = frame[frame[column].astype(str) == ALL]
    return frame.assign(judge=frame["judge"].astype(str))


def _usable(frame: pd.DataFrame | None, count: str, value: str) -> pd.DataFrame | None:
    """The rows with a usable judgment: ``count`` above 0 and ``value`` present (a condition
    whose verdicts all failed to parse has n = 0 and no rate); None if there is none."""
    if frame is None or count not in frame or value not in frame:
        return None
    frame = frame[(frame[count] > 0) & frame[value].notna()]
    return frame if len(frame) else None


def _most_often(frame: pd.DataFrame, group: str, value: str, best
                ) -> tuple[str | None, int, int]:
    """The judge alone best (``best``: max or min) in the most ``group`` values among those two
    or more judges have, with that count and the number of such values. A value whose best is
    tied has no winner, and the judge is None when no judge wins most often alone: a tie is not
    a winner."""
    groups = [rows for _, rows in frame.groupby(group, sort=False) if len(rows) > 1]
    winners = [str(top["judge"].iloc[0]) for top in (at_top(rows, value, best)
                                                     for rows in groups) if len(top) == 1]
    if not winners:
        return None, 0, len(groups)
    counts = pd.Series(winners).value_counts(sort=False)
    leaders = counts[counts == counts.max()]
    return (leaders.index[0] if len(leaders) == 1 else None), int(counts.max()), len(groups)


def _conditions(wins: int, shared: int, total: int) -> str:
    """``all 3 conditions``, ``both conditions``, ``10 of the 11 conditions two or more judges
    ran`` (a condition only one judge ran has no winner)."""
    if shared == 1:
        count = "the only condition"
    else:
        count = (("both" if shared == 2 else f"all {shared}") if wins == shared else
                 f"{wins} of the {shared}") + " conditions"
    return count + ("" if shared == total else " two or more judges ran")


def accuracy_sentence(acc: pd.DataFrame, reference: str | None) -> str:
    """The most accurate judge in the reference condition (without a usable one, the first
    condition), against the runner-up, and in how many conditions it leads; judges whose
    accuracies agree within the results' precision are tied, not ranked."""
    acc = acc.assign(condition=acc["condition"].astype(str))
    where = f"the reference condition {reference}"
    if reference not in set(acc["condition"]):
        reference = where = acc["condition"].iloc[0]
    ranked = acc[acc["condition"] == reference].sort_values("strict_accuracy", ascending=False,
                                                            kind="stable")
    rate = ("strict_accuracy", "strict_ci_low", "strict_ci_high")
    first = ranked.iloc[0]
    if len(ranked) == 1:
        return f"In {where}, {first['judge']}'s accuracy is {_pct(first, *rate)}."
    top = at_top(ranked, "strict_accuracy")
    if len(top) > 1:
        shown = {_pct(row, *rate) for _, row in top.iterrows()}
        each = (f"{shown.pop()} each" if len(shown) == 1 else
                "; ".join(f"{row['judge']} {_pct(row, *rate)}" for _, row in top.iterrows()))
        text = (f"In {where}, {names(list(top['judge']))} are tied for the highest accuracy: "
                f"{each}; no judge is the most accurate there.")
    else:
        second = ranked.iloc[1]
        digits = _apart(first, second, "strict_accuracy")
        overlap = ("; the two intervals overlap" if first["strict_ci_low"]
                   <= second["strict_ci_high"] else "; the two intervals are apart")
        text = (f"{first['judge']} is the most accurate judge in {where}: "
                f"{_pct(first, *rate, digits)} against {_pct(second, *rate, digits)} for the "
                f"next, {second['judge']}{overlap}.")
    judge, wins, shared = _most_often(acc, "condition", "strict_accuracy", max)
    leads = _conditions(wins, shared, acc["condition"].nunique())
    if shared > 1 and judge == first["judge"] and len(top) == 1:
        text += f" It is the most accurate in {leads}."
    elif shared > 1 and judge is not None:
        text += f" {judge} is the most accurate most often: in {leads}."
    return text


def flip_sentence(flips: pd.DataFrame, reference: str) -> str:
    """How much switching from the reference condition changes verdicts: the lowest and the
    highest flip rate, the judge that flips least most often, and the McNemar tests."""
    flips = flips.assign(target=flips["target"].astype(str))
    rate = ("flip_rate", "flip_ci_low", "flip_ci_high")
    text = f"Switching from {reference} to another condition changes "
    same = _everywhere(flips, rate)
    if len(flips) == 1:
        text += f"{_pct(flips.iloc[0], *rate)} ({flips.iloc[0]['judge']}, " \
                f"{flips.iloc[0]['target']}) of verdicts"
    elif same:
        text += f"the same share of verdicts, {same.replace('cells', 'pairs')}"
    else:
        text += (f"between {_extreme(flips, 'flip_rate', min, rate, 'target')} and "
                 f"{_extreme(flips, 'flip_rate', max, rate, 'target')} of verdicts")
    judge, wins, shared = _most_often(flips, "target", "flip_rate", min)
    if judge is not None:
        text += f"; {judge} flips least in {_conditions(wins, shared, flips['target'].nunique())}"
    if "mcnemar_p" in flips:
        tested = flips[flips["mcnemar_p"].notna()]
        text += (f"; accuracy changes significantly (McNemar, FDR {FDR:g} over the pairs) in "
                 f"{_discoveries(tested['mcnemar_p'])} of {len(tested)} judge x condition "
                 "pairs")
    return text + "."


def position_sentence(position: pd.DataFrame) -> str:
    """Position bias: how many judge x condition cells' first-seat share differs significantly
    from one half (the item-clustered test where the file has it), and the range of shares."""
    p = ("first_seat_cluster_p" if "first_seat_cluster_p" in position
         else "first_seat_p_unclustered")
    tested = position[position[p].notna()] if p in position else position.iloc[:0]
    rate = ("first_seat_rate", "first_seat_ci_low", "first_seat_ci_high")
    same = _everywhere(position, rate)
    if len(position) == 1:
        row = position.iloc[0]
        shares = f"the share is {_pct(row, *rate)} ({row['judge']}, {row['condition']})"
    elif same:
        shares = f"the share is {same}"
    else:
        low, high = (_extreme(position, "first_seat_rate", best, rate, "condition")
                     for best in (min, max))
        shares = f"shares run from {low} to {high}"
    if not len(tested):
        return f"Position: the first-seat share is untested; {shares}."
    test = "item-clustered binomial" if p == "first_seat_cluster_p" else "binomial"
    return (f"Position bias: the first-seat share differs significantly from 50% ({test} "
            f"test, FDR {FDR:g} over the cells) in {_discoveries(tested[p])} of "
            f"{len(tested)} judge x condition cells; {shares}.")


def judge_ls_verdict(res: Results, name: str) -> list[str]:
    """The verdict of a Judge-LS panel from its ``judge_ls/`` tables (none without them)."""
    pooled = _pooled(res.csv(f"{name}/judge_ls/accuracy.csv"))
    if pooled is None:
        return []
    flips_file = _pooled(res.csv(f"{name}/judge_ls/flips.csv"))
    acc = _usable(pooled, "n", "strict_accuracy")
    flips = _usable(flips_file, "n_pairs", "flip_rate")
    position = _usable(_pooled(res.csv(f"{name}/judge_ls/position.csv")), "n_decisive",
                       "first_seat_rate")
    reference = (str(flips_file["reference"].iloc[0]) if flips_file is not None
                 and len(flips_file) and "reference" in flips_file else None)
    sentences = []
    if acc is not None:
        sentences.append(accuracy_sentence(acc, reference))
    if flips is not None and reference:
        sentences.append(flip_sentence(flips, reference))
    if position is not None:
        sentences.append(position_sentence(position))
    empty = pooled[(pooled["n"] == 0) | pooled["strict_accuracy"].isna()]
    why = (unusable_outcomes(res, name, list(zip(empty["judge"], empty["condition"])))
           or "every verdict unparseable or missing")
    if len(empty) and acc is None:
        sentences.append(f"No usable judgment in this panel ({why}): no accuracy, flip or "
                         "position numbers.")
    elif len(empty):
        cells = ", ".join(f"{j} x {c}" for j, c in zip(empty["judge"], empty["condition"]))
        sentences.append(f"No usable judgment for {cells} ({why}): left out of these numbers, "
                         "not counted as 0.")
    return sentences
