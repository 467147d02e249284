"""The verdict at the top of a panel: a few sentences computed from the panel's outputs, never
written by hand, and the "who wins where" table (each language's top set, raw and after CBC, with
rank intervals).

Each sentence is made only when its file is in the run: who is first after CBC (or which
backbones cannot be told apart at the top: group 1 of ``cbc/leaderboard.csv``), how many pairs
reverse between languages in the raw scores and how many significantly
(``reversal/summary.json``), how large the interaction is (``cbc/summary.json``), and held-out
consistency raw against CBC (``heldout/tau.csv``). A Judge-LS panel's verdict comes from
``judge_ls/``: the most accurate judge (``accuracy.csv``), how often switching from the reference
condition changes a verdict (``flips.csv``) and how many judge x condition cells show a
significant position bias (``position.csv``); cells without a usable judgment are named and left
out, never counted as 0.
"""
from __future__ import annotations

import pandas as pd

from .results_folder import LANG_BB, PER_LANGUAGE, Results, col, table

TOP_COLUMNS = [col("language", type="text"), col("raw_top", "raw top set", "text"),
               col("cbc_top", "CBC top set", "text"), col("changed", "top changed", "bool")]


def _names(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def top_sets(board: pd.DataFrame, kind: str) -> dict[str, list[str]]:
    """Per language (file order): the backbones of group 1 (``rank_ub_*``; ``rank_*`` 1 without
    intervals), best rank first."""
    group = f"rank_ub_{kind}" if f"rank_ub_{kind}" in board else f"rank_{kind}"
    tops = {}
    for language, rows in board.groupby("language", sort=False):
        rows = rows[rows[group] == 1].sort_values(f"rank_{kind}", kind="stable")
        tops[str(language)] = [str(b) for b in rows["backbone"]]
    return tops


def first_sentence(board: pd.DataFrame) -> str:
    """Who is first after CBC, language by language, grouped by the top set."""
    tops = top_sets(board, "cbc")
    by_set: dict[tuple, list[str]] = {}
    for language, top in tops.items():
        by_set.setdefault(tuple(top), []).append(language)
    if len(by_set) == 1:
        (top, languages), = by_set.items()
        where = f"in all {len(languages)} languages" if len(languages) > 1 else \
            f"in {languages[0]}"
        if len(top) == 1:
            return f"After CBC, {top[0]} is first {where}."
        return f"After CBC, {_names(list(top))} cannot be told apart at the top {where}."
    parts = []
    for top, languages in sorted(by_set.items(), key=lambda kv: -len(kv[1])):
        if len(top) == 1:
            parts.append(f"{top[0]} in {_names(languages)}")
        else:
            parts.append(f"{_names(list(top))}, not told apart, in {_names(languages)}")
    return "After CBC, first: " + "; ".join(parts) + "."


def reversal_sentence(summary: dict) -> str:
    """The pair tests and, apart, the global test: they answer different questions (is this
    pair's reversal real; are there more reversals than without any interaction), so a
    significant pair beside a large global p is no contradiction."""
    n, reversed_, significant = summary["n_pairs"], summary["n_reversed"], summary["n_significant"]
    leaders = summary.get("n_distinct_top")
    lead = (f"the leader differs between languages ({leaders} backbones lead somewhere), and "
            if leaders and leaders > 1 else "")
    verb = "reverses its" if reversed_ == 1 else "reverse their"
    text = (f"In the raw scores, {lead}{reversed_} of {n} backbone pairs {verb} order "
            f"between two languages, {significant} of them significantly at FDR "
            f"{summary.get('fdr', 0.05):g} (a test of each pair).")
    test = summary.get("global_test") or {}
    if "p_value" in test:
        null = (f" ({test['null_mean']:.2f} on average over permuted panels)"
                if test.get("null_mean") is not None else "")
        count = test.get("observed", reversed_)
        pairs = f"is {count} reversing pair" if count == 1 else f"are {count} reversing pairs"
        text += (f" The global permutation test asks another question: {pairs} more than "
                 f"expected without any language x backbone interaction{null}? "
                 f"p = {test['p_value']:.3g}.")
    return text


def interaction_sentence(summary: dict) -> str:
    text = f"The largest language x backbone interaction is |beta| = {summary['max_abs_beta']:.3g}"
    if summary.get("radius_total") is not None:
        text += f" score units (the finite-sample radius is {summary['radius_total']:.3g})"
    return text + "."


def consistency_sentence(tau: pd.DataFrame) -> str | None:
    """Mean tau over replicates raw and after CBC, then the middle 95% of replicates (the
    method's 2.5 and 97.5 percentiles) in words: tau takes few values on a small panel, so the
    mean can lie outside that range, and brackets after it would read as an interval around it."""
    rows = tau.set_index("method")
    if not {"Raw", "CBC"} <= set(rows.index):
        return None
    # spread_*: the replicate spread; ci_*: its name in results of earlier versions
    spread = ("spread_low", "spread_high") if "spread_low" in rows else ("ci_low", "ci_high")
    shown = {m: [f"{rows.loc[m, k]:.2f}" for k in ("mean", *spread)]
             for m in ("Raw", "CBC")}
    counts = {rows.loc[m].get("n_replicates") for m in ("Raw", "CBC")}
    over = (f"{int(next(iter(counts)))} task-bootstrap replicates"
            if len(counts) == 1 and pd.notna(next(iter(counts))) else "task-bootstrap replicates")
    text = (f"Held-out rank consistency (Kendall tau, mean over {over}): {shown['Raw'][0]} raw, "
            f"{shown['CBC'][0]} after CBC; the middle 95% of replicates runs from "
            f"{shown['Raw'][1]} to {shown['Raw'][2]} raw and from {shown['CBC'][1]} to "
            f"{shown['CBC'][2]} after CBC.")
    outside = [(m, float(v[0]) < float(v[1])) for m, v in shown.items()
               if not float(v[1]) <= float(v[0]) <= float(v[2])]
    for method, below in outside:
        name = "raw" if method == "Raw" else "CBC"
        text += (f" The {name} mean lies {'below' if below else 'above'} that range because tau "
                 "takes few values here: most replicates give the same value and a few (at most "
                 f"2.5%) a {'lower' if below else 'higher'} one.")
    return text


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


def _pct(row, value: str, low: str, high: str) -> str:
    """A rate as the page's Judge-LS summary writes it: percent, one decimal, interval."""
    return f"{100 * row[value]:.1f}% [{100 * row[low]:.1f}, {100 * row[high]:.1f}]"


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


def _most_often(frame: pd.DataFrame, group: str, value: str, best) -> tuple[str, int, int]:
    """The judge best (``best``: idxmax or idxmin) in the most ``group`` values among those two
    or more judges have, with that count and the number of such values."""
    shared = frame.groupby(group, sort=False).filter(lambda rows: len(rows) > 1)
    winners = [str(rows.loc[best(rows[value]), "judge"])
               for _, rows in shared.groupby(group, sort=False)]
    if not winners:
        return "", 0, 0
    judge = max(dict.fromkeys(winners), key=winners.count)  # ties: the first to win
    return judge, winners.count(judge), len(winners)


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
    condition), against the runner-up, and in how many conditions it leads."""
    acc = acc.assign(condition=acc["condition"].astype(str))
    where = f"the reference condition {reference}"
    if reference not in set(acc["condition"]):
        reference = where = acc["condition"].iloc[0]
    ranked = acc[acc["condition"] == reference].sort_values("strict_accuracy", ascending=False,
                                                            kind="stable")
    first = ranked.iloc[0]
    shown = _pct(first, "strict_accuracy", "strict_ci_low", "strict_ci_high")
    if len(ranked) == 1:
        return f"In {where}, {first['judge']}'s accuracy is {shown}."
    second = ranked.iloc[1]
    overlap = ("; the two intervals overlap" if first["strict_ci_low"] <= second["strict_ci_high"]
               else "; the two intervals are apart")
    text = (f"{first['judge']} is the most accurate judge in {where}: {shown} against "
            f"{_pct(second, 'strict_accuracy', 'strict_ci_low', 'strict_ci_high')} for the next, "
            f"{second['judge']}{overlap}.")
    judge, wins, shared = _most_often(acc, "condition", "strict_accuracy", pd.Series.idxmax)
    leads = _conditions(wins, shared, acc["condition"].nunique())
    if shared > 1 and judge == first["judge"]:
        text += f" It is the most accurate in {leads}."
    elif shared > 1:
        text += f" {judge} is the most accurate most often: in {leads}."
    return text


def flip_sentence(flips: pd.DataFrame, reference: str) -> str:
    """How much switching from the reference condition changes verdicts: the lowest and the
    highest flip rate, the judge that flips least most often, and the McNemar tests."""
    flips = flips.assign(target=flips["target"].astype(str))
    low, high = flips.loc[flips["flip_rate"].idxmin()], flips.loc[flips["flip_rate"].idxmax()]
    rate = ("flip_rate", "flip_ci_low", "flip_ci_high")
    text = f"Switching from {reference} to another condition changes "
    text += (f"{_pct(low, *rate)} ({low['judge']}, {low['target']})" if len(flips) == 1 else
             f"between {_pct(low, *rate)} ({low['judge']}, {low['target']}) and "
             f"{_pct(high, *rate)} ({high['judge']}, {high['target']})") + " of verdicts"
    judge, wins, shared = _most_often(flips, "target", "flip_rate", pd.Series.idxmin)
    if shared:
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
    share = position["first_seat_rate"]
    low, high = position.loc[share.idxmin()], position.loc[share.idxmax()]
    rate = ("first_seat_rate", "first_seat_ci_low", "first_seat_ci_high")
    shares = (f"the share is {_pct(low, *rate)} ({low['judge']}, {low['condition']})"
              if len(position) == 1 else
              f"shares run from {_pct(low, *rate)} ({low['judge']}, {low['condition']}) to "
              f"{_pct(high, *rate)} ({high['judge']}, {high['condition']})")
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
    if len(empty) and acc is None:
        sentences.append("No usable judgment in this panel (every verdict unparseable or "
                         "missing): no accuracy, flip or position numbers.")
    elif len(empty):
        cells = ", ".join(f"{j} x {c}" for j, c in zip(empty["judge"], empty["condition"]))
        sentences.append(f"No usable judgment for {cells} (every verdict unparseable or "
                         "missing): left out of these numbers, not counted as 0.")
    return sentences


def verdict(res: Results, name: str) -> list[str]:
    """The panel's verdict sentences (none for a panel without these outputs)."""
    sentences = []
    board = res.csv(f"{name}/cbc/leaderboard.csv")
    if board is None:
        board = res.csv(f"{name}/cbc/rankings.csv")
    if board is not None and "rank_cbc" in board:
        sentences.append(first_sentence(board))
    summary = res.json(f"{name}/reversal/summary.json")
    if summary and "n_pairs" in summary:
        sentences.append(reversal_sentence(summary))
    cbc = res.json(f"{name}/cbc/summary.json")
    if cbc and cbc.get("max_abs_beta") is not None:
        sentences.append(interaction_sentence(cbc))
    tau = res.csv(f"{name}/heldout/tau.csv")
    if tau is not None:
        sentences.append(consistency_sentence(tau))
    sentences += judge_ls_verdict(res, name)
    return [s for s in sentences if s]


def who_wins_where(res: Results, name: str) -> dict | None:
    """The table of each language's top set, raw and after CBC, with their rank intervals."""
    source = f"{name}/cbc/leaderboard.csv"
    board = res.csv(source)
    if board is None:
        return None

    def shown(kind, language):
        rows = board[(board["language"].astype(str) == language)].set_index("backbone")
        return ", ".join(f"{b} [{rows.loc[b, f'rank_{kind}_low']}, "
                         f"{rows.loc[b, f'rank_{kind}_high']}]" for b in tops[kind][language])

    tops = {kind: top_sets(board, kind) for kind in ("raw", "cbc")}
    frame = pd.DataFrame([{"language": language, "raw_top": shown("raw", language),
                           "cbc_top": shown("cbc", language),
                           "changed": tops["raw"][language] != tops["cbc"][language]}
                          for language in tops["cbc"]])
    return table(f"{name}.top", "Who wins where: each language's top set, with rank intervals",
                 source, frame, TOP_COLUMNS, PER_LANGUAGE, {"language": LANG_BB["language"]},
                 note="The top set is group 1: the backbones whose rank interval reaches 1.")
