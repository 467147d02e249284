"""The verdict at the top of a panel: a few sentences computed from the panel's outputs, never
written by hand, and the "who wins where" table (each language's top set, raw and after CBC, with
rank intervals).

Each sentence is made only when its file is in the run: who is first after CBC (or which
backbones cannot be told apart at the top: group 1 of ``cbc/leaderboard.csv``), how many pairs
reverse between languages in the raw scores and how many significantly
(``reversal/summary.json``), how large the interaction is (``cbc/summary.json``), and held-out
consistency raw against CBC (``heldout/tau.csv``).
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
    shown = {m: [f"{rows.loc[m, k]:.2f}" for k in ("mean", "ci_low", "ci_high")]
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
