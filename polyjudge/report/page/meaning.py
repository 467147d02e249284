"""What a panel's numbers mean, in the words the page uses: what its rankings rank, when two
values are a tie, how double-centring spreads one cell, and the outcome of calls that left a
condition without usable judgments.

"First" on a leaderboard is the highest mean. Without a reference answer (a panel of judges'
verdicts, such as DevAI's share of requirements judged satisfied) the highest mean is the most
lenient judge (the score model's backbone leniency ``alpha``, docs/methods.md section 1.1), not
the best; with a reference (preference labels, gold answers) it is the closest agreement with it.
Everything here reads the results folder's files; nothing is recomputed.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .results_folder import Results

RTOL, ATOL = 1e-9, 1e-12
"""Two values are tied when they agree within the precision the results keep across machines
(the output snapshot's tolerance, docs/outputs.md): a tie is not a winner."""

MEANINGS = {
    "passes": {
        "text": "Ranked: each backbone's mean score over tasks, the share of requirements it "
                "judged satisfied. A mean score is not checked against any reference answer "
                "(the judge card does that), so a higher mean is a more lenient judge (the "
                "backbone leniency of docs/methods.md), not a more accurate one: the first "
                "backbone is the most lenient.",
        "top": "the highest mean score", "means": "the most lenient judge"},
    "scores": {
        "text": "Ranked: each backbone's mean score over tasks, the judges' own scores. A mean "
                "score is not checked against any reference answer, so a higher mean is a more "
                "lenient judge, not a more accurate one: the first backbone is the most lenient.",
        "top": "the highest mean score", "means": "the most lenient judge"},
    "margins": {
        "text": "Ranked: each backbone's mean margin over items, its score of the preferred "
                "response minus its score of the rejected one. The preference labels are a "
                "reference: a higher mean is more agreement with them, and also a wider use of "
                "the score scale; a judge's leniency cancels in the margin.",
        "top": "the highest mean margin",
        "means": "the strongest preference for the labelled responses"},
    "planted": {
        "text": "Ranked: each backbone's mean simulated score, its planted backbone effect plus "
                "noise. The panel is simulated with a known truth: no judge is rated.",
        "top": "the highest mean score", "means": "the largest planted effect"},
    "accuracy": {
        "text": "Ranked: each judge's accuracy against {gold}, per condition (strict: a tie "
                "verdict counts as wrong). The panel has a reference, so a higher rate is a "
                "more accurate judge.",
        "top": "the highest accuracy", "means": "the most accurate judge"},
}
GOLD = {"llmbar": "LLMBar's gold preferences", "synthetic": "the simulated gold answers"}


def ranked_quantity(res: Results, name: str) -> dict | None:
    """``{"kind", "text", "top", "means"}``: what panel ``name``'s rankings rank, from its
    ``inputs.json`` (``kind``, and whether DevAI-style requirement verdicts were read) or its
    Judge-LS tables; None when the folder does not say."""
    judge_ls = res.json(f"{name}/judge_ls/inputs.json")
    if judge_ls is not None or res.path(f"{name}/judge_ls/accuracy.csv"):
        source = (judge_ls or {}).get("source")
        meaning = dict(MEANINGS["accuracy"])
        meaning["text"] = meaning["text"].format(gold=GOLD.get(source, "the items' gold "
                                                                       "answers"))
        return {"kind": "accuracy", **meaning}
    manifest = res.json(f"{name}/inputs.json")
    if manifest is None:  # an older folder: cbc/summary.json lists the inputs, not the kind
        files = (res.json(f"{name}/cbc/summary.json") or {}).get("inputs") or {}
        verdicts = {"requirements", "judgments"} & set(files)  # requirement-level verdicts
        return {"kind": "passes", **MEANINGS["passes"]} if verdicts else None
    kind, files = manifest.get("kind"), manifest.get("files") or {}
    key = {"judgment_tree": "passes", "preference_margins": "margins",
           "synthetic": "planted"}.get(kind)
    if kind == "judge_runs":
        key = "passes" if "requirements" in files else "scores"
    if key is None:
        return None
    meaning = {"kind": key, **MEANINGS[key]}
    meaning["text"] = " ".join(filter(None, [meaning["text"], pooled_factors(res, name)]))
    return meaning


def pooled_factors(res: Results, name: str) -> str:
    """What the ranking pools over, from ``shape.json``'s factors: the runs of a cell (repeats
    or judged systems) and the task strata; empty when the panel has neither."""
    found = (res.json(f"{name}/shape.json") or {}).get("factors") or {}
    parts = []
    if "framework" in found:
        parts.append(f"{found['framework']['values']} frameworks per cell")
    if "stratum" in found:
        parts.append(f"{found['stratum']['values']} task strata")
    return f"Averaged over {' and '.join(parts)}." if parts else ""


def names(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def tied(a, b) -> bool:
    return bool(np.isclose(float(a), float(b), rtol=RTOL, atol=ATOL))


def at_top(frame: pd.DataFrame, value: str, best=max) -> pd.DataFrame:
    """The rows of ``frame`` tied for the best ``value`` (``best``: max or min)."""
    top = best(frame[value])
    return frame[np.isclose(frame[value].to_numpy(float), top, rtol=RTOL, atol=ATOL)]


def spread_sentence(k: int, m: int, estimator: str | None) -> str:
    """One sentence: double-centring spreads one cell's departure over its row and column, with
    the shares for this panel's ``k`` languages and ``m`` backbones where beta double-centres
    the cell means (the plain and available-means estimators)."""
    text = ("Double-centring spreads one cell's effect over its row and column: a single cell "
            "that departs from the additive model by d")
    if estimator in ("plain", "available_means") and k > 1 and m > 1:
        km = k * m
        text += (f" shows as {(k - 1) * (m - 1) / km:.2f} d there, "
                 f"{-(k - 1) / km:.2f} d in the other backbones of its language, "
                 f"{-(m - 1) / km:.2f} d in the other languages of its backbone and "
                 f"{1 / km:.2f} d elsewhere ({k} languages x {m} backbones)")
    else:
        text += " shows partly in the other cells of its language and of its backbone"
    return text + (", so a row or column of small cells of one sign can be the echo of one "
                   "large cell of the other sign.")


OUTCOMES = (("n_no_input", "no_input"), ("n_parse_failure", "unparseable"),
            ("n_failed", "failed"))


def unusable_outcomes(res: Results, name: str, cells: list[tuple[str, str]]) -> str | None:
    """The judging calls of ``cells`` (judge x condition) by outcome, as the collection's
    ``collect/status.csv`` counts them (``collect/status.csv: 32 no_input, ...``); None when the
    panel was not collected or the file has no such rows."""
    status = res.csv(f"{name}/collect/status.csv")
    if status is None or not {"stage", "endpoint", "condition"} <= set(status.columns):
        return None
    keys = {(str(j), str(c)) for j, c in cells}
    rows = status[[(str(e), str(c)) in keys and str(s).startswith("judge")
                   for s, e, c in zip(status["stage"], status["endpoint"],
                                      status["condition"])]]
    counts = {words: int(rows[column].sum()) for column, words in OUTCOMES if column in rows}
    parts = [f"{n} {words}" for words, n in counts.items() if n]
    if not parts:
        return None
    return ("collect/status.csv: " + ", ".join(parts)
            + (", nothing to judge because the text to judge was not usable"
               if counts.get("no_input") else ""))
