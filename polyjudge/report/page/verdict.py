"""The verdict at the top of a panel: a few sentences computed from the panel's outputs, never
written by hand, and the "who is first where" table (each language's top set, raw and after
CBC, with rank intervals).

Each sentence is made only when its file is in the run: who has the highest mean after CBC, in
the panel's own words for it (:mod:`.meaning`: without a reference answer, the most lenient
judge), or which backbones cannot be told apart at the top (group 1 of
``cbc/leaderboard.csv``); how many pairs reverse between languages in the raw scores and how many
significantly (``reversal/summary.json``; without it, who leads raw, from the leaderboard, and
that it is not tested); the largest interaction and its cell (``cbc/summary.json``,
``cbc/beta.csv``); and held-out consistency raw against CBC (``heldout/tau.csv``). A Judge-LS
panel's verdict comes from ``judge_ls/``: the most accurate judge (``accuracy.csv``), how often
switching from the reference condition changes a verdict (``flips.csv``) and how many judge x
condition cells show a significant position bias (``position.csv``); cells without a usable
judgment are named, with their calls' outcomes where the collection counted them, and left
out, never counted as 0. Values equal within the results' precision are a tie, not a winner.
"""
from __future__ import annotations

import pandas as pd

from .verdict_judge_ls import judge_ls_verdict
from .meaning import at_top, names, ranked_quantity, tied
from .results_folder import LANG_BB, PER_LANGUAGE, Results, col, table

TOP_COLUMNS = [col("language", type="text"), col("raw_top", "raw top set", "text"),
               col("cbc_top", "CBC top set", "text"), col("changed", "top changed", "bool")]


def top_sets(board: pd.DataFrame, kind: str) -> dict[str, list[str]]:
    """Per language (file order): the backbones of group 1 (``rank_ub_*``; ``rank_*`` 1 without
    intervals), best rank first."""
    group = f"rank_ub_{kind}" if f"rank_ub_{kind}" in board else f"rank_{kind}"
    tops = {}
    for language, rows in board.groupby("language", sort=False):
        rows = rows[rows[group] == 1].sort_values(f"rank_{kind}", kind="stable")
        tops[str(language)] = [str(b) for b in rows["backbone"]]
    return tops


def first_sentence(board: pd.DataFrame, top: str = "the highest mean score",
                   means: str | None = None) -> str:
    """Who is first after CBC, language by language, grouped by the top set; ``top`` says what
    first is and ``means`` what that means (:func:`.meaning.ranked_quantity`: on a panel without
    a reference answer, the highest mean score is the most lenient judge)."""
    tops = top_sets(board, "cbc")
    by_set: dict[tuple, list[str]] = {}
    for language, backbones in tops.items():
        by_set.setdefault(tuple(backbones), []).append(language)
    if len(by_set) == 1:
        (backbones, languages), = by_set.items()
        where = (f"in {languages[0]}" if len(languages) == 1 else "in both languages"
                 if len(languages) == 2 else f"in all {len(languages)} languages")
        if len(backbones) == 1:
            return f"After CBC, {backbones[0]} has {top} {where}" + \
                (f": {means}." if means else ".")
        return (f"After CBC, {names(list(backbones))} cannot be told apart at the top {where} "
                f"({top}" + (f": {means})." if means else ")."))
    parts = []
    for backbones, languages in sorted(by_set.items(), key=lambda kv: -len(kv[1])):
        if len(backbones) == 1:
            parts.append(f"{backbones[0]} in {names(languages)}")
        else:
            parts.append(f"{names(list(backbones))}, not told apart, in {names(languages)}")
    return (f"After CBC, {top}" + (f" ({means})" if means else "") + ": " + "; ".join(parts)
            + ".")


def raw_leader_sentence(board: pd.DataFrame) -> str:
    """Where a panel has rankings but no reversal test: which backbone has the highest raw mean
    in each language (``rank_raw`` 1; several are tied), and that whether such differences
    exceed chance is not tested."""
    leaders: dict[tuple, list[str]] = {}
    for language, rows in board.groupby("language", sort=False):
        first = tuple(str(b) for b in rows.loc[rows["rank_raw"] == 1, "backbone"])
        leaders.setdefault(first, []).append(str(language))

    def who(first):
        return first[0] if len(first) == 1 else f"{names(list(first))} (tied)"
    groups = sorted(leaders.items(), key=lambda kv: -len(kv[1]))
    if len(groups) == 1:
        text = f"In the raw scores, {who(groups[0][0])} has the highest mean in every language"
    else:
        text = ("In the raw scores, the backbone with the highest mean differs between "
                "languages: " + "; ".join(
                    f"{who(first)} in " + (names(languages) if len(languages) <= 3 or i else
                                           f"{len(languages)} languages")
                    for i, (first, languages) in enumerate(groups)))
    return (text + ". The panel does not run the reversal test (`reversal` is not among its "
            "analyses), so whether the order differs between languages beyond chance is not "
            "tested here.")


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


def interaction_sentence(summary: dict, beta: pd.DataFrame | None = None) -> str:
    """The largest interaction, with its cell (or cells, when tied: on a panel of two languages
    every |beta| appears twice) from ``cbc/beta.csv`` and its sign in words."""
    largest = summary["max_abs_beta"]
    radius = (f" (the finite-sample radius is {summary['radius_total']:.3g})"
              if summary.get("radius_total") is not None else "")
    cells = (at_top(beta.assign(size=beta["beta"].abs()), "size") if beta is not None
             and len(beta) and tied(beta["beta"].abs().max(), largest) else None)
    if cells is None:
        return (f"The largest language x backbone interaction is |beta| = {largest:.3g}"
                + (" score units" + radius if radius else "") + ".")
    if len(cells) == 1:
        cell = cells.iloc[0]
        side = "above" if cell["beta"] > 0 else "below"
        return (f"The largest language x backbone interaction is {cell['backbone']} in "
                f"{cell['language']}: beta = {cell['beta']:+.3g} score units, {side} what its "
                f"language's and its backbone's means predict{radius}.")
    named = names([f"{b} in {l} ({v:+.3g})" for l, b, v in
                    zip(cells["language"], cells["backbone"], cells["beta"])])
    return (f"The largest language x backbone interactions, tied at |beta| = {largest:.3g} "
            f"score units, are {named}{radius}.")


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


def verdict(res: Results, name: str) -> list[str]:
    """The panel's verdict sentences (none for a panel without these outputs)."""
    sentences = []
    board = res.csv(f"{name}/cbc/leaderboard.csv")
    if board is None:
        board = res.csv(f"{name}/cbc/rankings.csv")
    meaning = ranked_quantity(res, name) or {}
    if board is not None and "rank_cbc" in board:
        sentences.append(first_sentence(board, meaning.get("top", "the highest mean score"),
                                        meaning.get("means")))
    summary = res.json(f"{name}/reversal/summary.json")
    if summary and "n_pairs" in summary:
        sentences.append(reversal_sentence(summary))
    elif board is not None and "rank_raw" in board:
        sentences.append(raw_leader_sentence(board))
    cbc = res.json(f"{name}/cbc/summary.json")
    if cbc and cbc.get("max_abs_beta") is not None:
        sentences.append(interaction_sentence(cbc, res.csv(f"{name}/cbc/beta.csv")))
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
    return table(f"{name}.top", "Who is first where: each language's top set (the highest "
                 "means), with rank intervals",
                 source, frame, TOP_COLUMNS, PER_LANGUAGE, {"language": LANG_BB["language"]},
                 note="The top set is group 1: the backbones whose rank interval reaches 1.")
