"""Judge-LS: language-switching and position invariance of pairwise LLM judges.

Judge-LS paper ("Does the Judge Prefer English? Evaluating Language-Switching Invariance in
LLM-as-a-Judge", arXiv 2606.14278; summary in ../shared/seeds/), protocol of METHODS.md section 8.

Verdict table (the ``pairwise_verdicts`` panel kind), one row per judgment:

* ``item``, ``subset``: the comparison (items are matched across conditions on (item, subset));
* ``judge``, ``condition`` (en / zh / cs, or any condition such as a prompting strategy);
* ``order``: ``original`` (output 1 shown as A) or ``swapped`` (output 2 shown as A);
* ``verdict``: ``A`` / ``B`` / ``Tie`` (case and surrounding blanks ignored); anything else is
  unparseable: counted as invalid in every table (``n_invalid``), never silently dropped;
* ``gold``: ``1`` / ``2`` (better output, original indices), or ``Tie`` for a tie probe;
* tie probes (gold ``Tie``: the gold answer against its translation) also carry
  ``probe_language_1`` and ``probe_language_2``, the language of output 1 and output 2.

Accuracy, flip and position tables use the gold 1/2 judgments; tie probes go to
:func:`tie_probe_table` only. Every table has a ``subset`` value ``all`` pooling the subsets.
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd
import scipy.stats

from .io import InputError, file_rows, read_table

VERDICT_KEYS = ["item", "subset", "judge", "condition", "order"]
VERDICT_COLUMNS = VERDICT_KEYS + ["verdict", "gold"]
PROBE_COLUMNS = ["probe_language_1", "probe_language_2"]
ORDERS = ("original", "swapped")
DUPLICATE_POLICIES = ("error", "drop_first")
ALL = "all"


# --- input -------------------------------------------------------------------------------------
def validate_verdicts(frame: pd.DataFrame, source: str, conditions=None,
                      on_duplicate: str = "error") -> pd.DataFrame:
    """Check a verdict table and return it with canonical values (keys and gold as strings).

    Raises :class:`judgecal.io.InputError` naming ``source``, the offending rows and what was
    expected, for: missing columns or key values, ``order`` not original/swapped, ``gold`` not
    1/2/Tie, the reserved subset name ``all``, a tie probe without its probe languages, a
    condition outside ``conditions`` (when given), and duplicate (item, subset, judge, condition,
    order) judgments. ``on_duplicate="drop_first"`` instead keeps the first judgment in file order
    and drops the later ones (with a warning giving the count). Verdicts are not checked here:
    unparseable verdicts are data, counted by the metric tables.
    """
    if on_duplicate not in DUPLICATE_POLICIES:
        raise ValueError(f"on_duplicate must be one of {DUPLICATE_POLICIES}, got {on_duplicate!r}")
    missing = [c for c in VERDICT_COLUMNS if c not in frame.columns]
    if missing:
        raise InputError(source, f"missing column(s) {missing}; it has {list(frame.columns)}",
                         f"columns {VERDICT_COLUMNS}")
    out = frame.reset_index(drop=True).copy()
    for column in VERDICT_KEYS:
        text = out[column].astype(str).str.strip()
        empty = out[column].isna() | (text == "")
        if empty.any():
            raise InputError(source, f"{int(empty.sum())} row(s) with an empty `{column}`",
                             f"every judgment has a {column}", file_rows(out, empty))
        out[column] = text
    bad_order = ~out["order"].isin(ORDERS)
    if bad_order.any():
        raise InputError(source, f"`order` values {sorted(out.loc[bad_order, 'order'].unique())}",
                         f"order in {list(ORDERS)}", file_rows(out, bad_order))
    if (out["subset"] == ALL).any():
        raise InputError(source, "subset named 'all'",
                         "subset names other than 'all' (reserved for the pooled rows)",
                         file_rows(out, out["subset"] == ALL))
    out["gold"] = _canonical_gold(out["gold"])
    bad_gold = out["gold"].isna()
    if bad_gold.any():
        raise InputError(source, f"{int(bad_gold.sum())} row(s) with a bad `gold`",
                         "gold 1 or 2 (better output, original indices) or Tie (tie probe)",
                         file_rows(frame.reset_index(drop=True), bad_gold))
    probes = out["gold"] == "Tie"
    if probes.any():
        absent = [c for c in PROBE_COLUMNS if c not in out.columns]
        if absent:
            raise InputError(source, f"tie probes (gold Tie) but no column(s) {absent}",
                             f"columns {PROBE_COLUMNS}: language of output 1 and output 2")
        blank = probes & out[PROBE_COLUMNS].isna().any(axis=1)
        if blank.any():
            raise InputError(source, "tie probe(s) without probe languages",
                             f"{PROBE_COLUMNS} filled on every gold Tie row", file_rows(out, blank))
    if conditions is not None:
        unknown = ~out["condition"].isin([str(c) for c in conditions])
        if unknown.any():
            raise InputError(source, f"unknown condition(s) {sorted(out.loc[unknown, 'condition'].unique())}",
                             f"condition in {list(conditions)}", file_rows(out, unknown))
    duplicated = out.duplicated(VERDICT_KEYS, keep=False)
    if duplicated.any():
        if on_duplicate == "error":
            raise InputError(source, f"{int(duplicated.sum())} rows repeat a judgment",
                             "one row per (item, subset, judge, condition, order); set the "
                             "panel's on_duplicate to drop_first to keep the first",
                             file_rows(out, duplicated).sort_values(VERDICT_KEYS))
        later = out.duplicated(VERDICT_KEYS, keep="first")
        warnings.warn(f"{source}: dropped {int(later.sum())} repeated judgment(s), kept the first")
        out = out.loc[~later].reset_index(drop=True)
    return out


def _canonical_gold(gold: pd.Series) -> pd.Series:
    """'1' / '2' / 'Tie' from ints, floats or strings; NaN for anything else."""
    def canon(value):
        text = str(value).strip()
        if text.lower() == "tie":
            return "Tie"
        try:
            return {1.0: "1", 2.0: "2"}.get(float(text), np.nan)
        except ValueError:
            return np.nan
    return gold.map({value: canon(value) for value in pd.unique(gold)})


def normalise_choices(frame: pd.DataFrame) -> pd.DataFrame:
    """Add ``choice`` (the verdict in original output indices) and ``valid``.

    original order: A -> 1, B -> 2; swapped order: A -> 2, B -> 1; Tie -> Tie (METHODS 8).
    Unparseable verdicts get ``choice`` NaN and ``valid`` False. Expects a validated table.
    """
    verdict = frame["verdict"].astype(str).str.strip().str.upper()
    swapped = (frame["order"] == "swapped").to_numpy()
    a, b = (verdict == "A").to_numpy(), (verdict == "B").to_numpy()
    choice = np.select([verdict.to_numpy() == "TIE", a & ~swapped | b & swapped,
                        b & ~swapped | a & swapped], ["Tie", "1", "2"], default="")
    out = frame.assign(choice=pd.Series(choice, index=frame.index).replace("", np.nan))
    return out.assign(valid=out["choice"].notna())


def load_llmbar(verdicts_csv_path, rating: str = "tie") -> pd.DataFrame:
    """LLMBar stored verdicts as a validated verdict table (six judges, English only).

    Input: the flattened ``llmbar_judge_verdicts_long.csv`` (subset, item_index, label, evaluator,
    strategy, winner_noswap, winner_swap, score_1, score_2; winners in ORIGINAL output indices,
    empty = unparsable). judge = evaluator, condition = strategy, item = item_index (within its
    subset), gold = label; two rows per judgment, ``original`` from winner_noswap and ``swapped``
    from winner_swap, with the winner converted to the letter it had in the presented order
    (original: 1 -> A; swapped: 1 -> B), so :func:`normalise_choices` gives back the winner.

    ``Rating*`` strategies rate each output alone on 1-10 (``score_1``, ``score_2``), so their
    order is irrelevant; upstream breaks equal scores towards the output shown second, which turns
    a tie into a position effect. ``rating`` chooses:

    * ``"tie"`` (default): verdict from the scores (higher wins, equal = Tie, a missing score =
      unparseable), the same in both orders: position inconsistency is 0 by design;
    * ``"upstream"``: the stored winners (reproduces upstream ``statistics.json`` exactly);
    * ``"exclude"``: drop the Rating strategies.
    """
    if rating not in ("tie", "upstream", "exclude"):
        raise ValueError(f"rating must be 'tie', 'upstream' or 'exclude', got {rating!r}")
    raw = read_table(verdicts_csv_path, columns=["subset", "item_index", "label", "evaluator",
                                                 "strategy", "winner_noswap", "winner_swap",
                                                 "score_1", "score_2"])
    is_rating = raw["strategy"].astype(str).str.startswith("Rating")
    if rating == "exclude":
        raw = raw.loc[~is_rating].reset_index(drop=True)
        is_rating = is_rating.loc[~is_rating].reset_index(drop=True)
    base = pd.DataFrame({"item": raw["item_index"], "subset": raw["subset"],
                         "judge": raw["evaluator"], "condition": raw["strategy"],
                         "gold": raw["label"]})
    letters = {"original": {1: "A", 2: "B"}, "swapped": {1: "B", 2: "A"}}
    score_verdict = pd.Series(np.select(
        [raw["score_1"] > raw["score_2"], raw["score_1"] < raw["score_2"],
         raw["score_1"] == raw["score_2"]], ["1", "2", "Tie"], default=""), index=raw.index)
    parts = []
    for order, column in (("original", "winner_noswap"), ("swapped", "winner_swap")):
        verdict = pd.to_numeric(raw[column], errors="coerce").map(letters[order]).fillna("")
        if rating == "tie":
            derived = score_verdict.map({"1": letters[order][1], "2": letters[order][2],
                                         "Tie": "Tie", "": ""})
            verdict = verdict.where(~is_rating, derived)
        parts.append(base.assign(order=order, verdict=verdict))
    return validate_verdicts(pd.concat(parts, ignore_index=True)[VERDICT_COLUMNS],
                             str(verdicts_csv_path))


# --- intervals and tests -------------------------------------------------------------------------
def wilson_interval(successes, n, confidence: float = 0.95):
    """Wilson score interval ``(low, high)`` for ``successes`` out of ``n`` (arrays broadcast).

    ``(p + z^2/2n -/+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)``, ``z`` the normal quantile;
    NaN where ``n = 0``.
    """
    k, n = np.asarray(successes, float), np.asarray(n, float)
    z = scipy.stats.norm.isf((1 - confidence) / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        denom = 1 + z**2 / n
        center = (p + z**2 / (2 * n)) / denom
        half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / denom
    return center - half, center + half


def mcnemar_exact_p(b, c):
    """Exact two-sided McNemar p: binomial test of ``b`` vs ``c`` discordant pairs at 1/2.

    ``p = min(1, 2 P(X <= min(b, c)))``, ``X ~ Binomial(b + c, 1/2)``; 1 when ``b + c = 0``.
    """
    b, c = np.asarray(b), np.asarray(c)
    return np.minimum(1.0, 2 * scipy.stats.binom.cdf(np.minimum(b, c), b + c, 0.5))


# --- metric tables -------------------------------------------------------------------------------
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


# --- translation audit ---------------------------------------------------------------------------
@dataclass(frozen=True)
class AuditThresholds:
    """Audit thresholds of METHODS 8 (Judge-LS section 2.1); defaults are the paper's."""
    min_reference_numbers: int = 2        # lost numbers: reference has >= this many, variant none
    number_count_difference: int = 3     # number-count change: |difference| >= this
    length_ratio_full: float = 0.10       # shrinkage: variant/reference length below this ...
    length_ratio_code_switched: float = 0.35  # ... or this for code-switched variants


AUDIT_KINDS = {"full": "length_ratio_full", "code_switched": "length_ratio_code_switched"}
TEXT_KEYS = ["item", "subset", "field"]
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _text_table(texts: pd.DataFrame, source: str) -> pd.DataFrame:
    missing = [c for c in TEXT_KEYS + ["text"] if c not in texts.columns]
    if missing:
        raise InputError(source, f"missing column(s) {missing}", f"columns {TEXT_KEYS + ['text']}")
    out = texts[TEXT_KEYS + ["text"]].reset_index(drop=True).astype({k: str for k in TEXT_KEYS})
    repeated = out.duplicated(TEXT_KEYS, keep=False)
    if repeated.any():
        raise InputError(source, "repeated (item, subset, field)", "one text per field",
                         file_rows(out, repeated))
    return out


def translation_audit(reference_texts: pd.DataFrame, variant_texts: pd.DataFrame,
                      kind: str = "full", thresholds: AuditThresholds = AuditThresholds()
                      ) -> pd.DataFrame:
    """Flag risky translated fields (Judge-LS section 2.1, METHODS 8).

    Both tables have columns item, subset, field, text; every reference field is audited (a
    variant field that is absent counts as empty). ``kind`` is ``full`` (translation) or
    ``code_switched``. Numbers are digit runs (``12``, ``3.5``, ``1,000``; Unicode digits
    included, number words not). Columns of the result: item, subset, field, kind,
    reference_length, variant_length (characters, outer blanks stripped), length_ratio,
    reference_numbers, variant_numbers, and the flags empty (either text empty), lost_numbers
    (reference >= min_reference_numbers, variant none), number_count_change (counts differ by >=
    number_count_difference), shrinkage (length_ratio below the kind's threshold), flagged (any).
    """
    if kind not in AUDIT_KINDS:
        raise ValueError(f"kind must be one of {list(AUDIT_KINDS)}, got {kind!r}")
    ref = _text_table(reference_texts, "reference texts")
    var = _text_table(variant_texts, "variant texts")
    audit = ref.merge(var, on=TEXT_KEYS, how="left", suffixes=("_reference", "_variant"))
    ref_text = audit["text_reference"].fillna("").astype(str).str.strip()
    var_text = audit["text_variant"].fillna("").astype(str).str.strip()
    out = audit[TEXT_KEYS].assign(kind=kind, reference_length=ref_text.str.len(),
                                  variant_length=var_text.str.len())
    with np.errstate(divide="ignore", invalid="ignore"):
        out["length_ratio"] = out["variant_length"] / out["reference_length"].replace(0, np.nan)
    out["reference_numbers"] = ref_text.str.count(_NUMBER.pattern)
    out["variant_numbers"] = var_text.str.count(_NUMBER.pattern)
    out["empty"] = (out["reference_length"] == 0) | (out["variant_length"] == 0)
    out["lost_numbers"] = ((out["reference_numbers"] >= thresholds.min_reference_numbers)
                           & (out["variant_numbers"] == 0))
    out["number_count_change"] = ((out["reference_numbers"] - out["variant_numbers"]).abs()
                                  >= thresholds.number_count_difference)
    out["shrinkage"] = out["length_ratio"] < getattr(thresholds, AUDIT_KINDS[kind])
    out["flagged"] = out[["empty", "lost_numbers", "number_count_change", "shrinkage"]].any(axis=1)
    return out


def flip_sensitivity(frame: pd.DataFrame, flagged_items: pd.DataFrame, reference: str = "en",
                     confidence: float = 0.95) -> pd.DataFrame:
    """Flip table on all items and again without the flagged (item, subset) pairs.

    ``flagged_items`` has columns item and subset (e.g. ``audit.loc[audit.flagged, ["item",
    "subset"]]``). Result: the :func:`flip_table` columns plus ``items`` (``all`` or
    ``unflagged``) and ``n_excluded_items`` (distinct flagged items removed from the data).
    """
    keys = flagged_items[["item", "subset"]].astype(str).drop_duplicates()
    marked = frame.merge(keys.assign(_flagged=True), on=["item", "subset"], how="left")
    flagged = marked["_flagged"].eq(True).to_numpy()
    excluded = len(frame.loc[flagged, ["item", "subset"]].drop_duplicates())
    return pd.concat([flip_table(frame, reference, confidence).assign(items=ALL, n_excluded_items=0),
                      flip_table(frame.loc[~flagged], reference, confidence)
                      .assign(items="unflagged", n_excluded_items=excluded)], ignore_index=True)


# --- summary -------------------------------------------------------------------------------------
def _markdown(table: pd.DataFrame) -> str:
    rows = [list(map(str, table.columns))] + table.astype(object).fillna("").astype(str).values.tolist()
    lines = ["| " + " | ".join(r) + " |" for r in rows]
    lines.insert(1, "|" + "---|" * len(table.columns))
    return "\n".join(lines)


def _rate(value, low, high) -> str:
    return "n/a" if pd.isna(value) else f"{100 * value:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def summary_markdown(accuracy: pd.DataFrame, flips: pd.DataFrame | None = None,
                     position: pd.DataFrame | None = None, tie_probe: pd.DataFrame | None = None,
                     sensitivity: pd.DataFrame | None = None, audit: pd.DataFrame | None = None,
                     title: str = "Judge-LS summary") -> str:
    """A short Markdown report: accuracy, flips, position inconsistency, tie probes, audit.

    Uses the pooled rows (subset ``all``, order ``all``); rates are percent with 95% (or the
    tables') intervals in brackets.
    """
    acc = accuracy.loc[(accuracy["subset"] == ALL) & (accuracy["order"] == ALL)]
    parts = [f"# {title}", "",
             f"{int(acc['n'].sum())} gold judgments scored; {int(acc['n_invalid'].sum())} "
             "unparseable verdicts (left out of the rates, counted here).", "",
             "## Strict accuracy", "",
             _markdown(acc.assign(value=[_rate(*r) for r in acc[["strict_accuracy", "strict_ci_low",
                                                                  "strict_ci_high"]].values])
                       .pivot(index="judge", columns="condition", values="value")
                       .reindex(index=pd.unique(acc["judge"]), columns=pd.unique(acc["condition"]))
                       .reset_index())]
    best = acc.loc[acc.groupby("judge", sort=False)["strict_accuracy"].idxmax()]
    parts += ["", "Most accurate condition: " + "; ".join(
        f"{j} {c}" for j, c in zip(best["judge"], best["condition"])) + "."]
    if flips is not None and len(flips):
        f = flips.loc[flips["subset"] == ALL]
        parts += ["", f"## Flips against `{f['reference'].iloc[0]}`", "", _markdown(pd.DataFrame({
            "judge": f["judge"], "target": f["target"], "pairs": f["n_pairs"],
            "flip rate": [_rate(*r) for r in f[["flip_rate", "flip_ci_low", "flip_ci_high"]].values],
            "gold-correctness flips": [_rate(*r) for r in f[["gold_flip_rate", "gold_flip_ci_low",
                                                            "gold_flip_ci_high"]].values],
            "b / c": [f"{b} / {c}" for b, c in f[["n_discordant_b", "n_discordant_c"]].values],
            "McNemar p": [f"{p:.3g}" for p in f["mcnemar_p"]]}))]
        parts += ["", f"Flip rates range {100 * f['flip_rate'].min():.1f}%-"
                      f"{100 * f['flip_rate'].max():.1f}%."]
    if sensitivity is not None and len(sensitivity):
        s = sensitivity.loc[(sensitivity["subset"] == ALL) & (sensitivity["items"] == "unflagged")]
        parts += ["", f"Without the {int(s['n_excluded_items'].max())} flagged items flip rates "
                      f"range {100 * s['flip_rate'].min():.1f}%-{100 * s['flip_rate'].max():.1f}%."]
    if position is not None and len(position):
        p = position.loc[position["subset"] == ALL]
        parts += ["", "## Position inconsistency", "", _markdown(
            p.assign(value=[_rate(*r) for r in p[["position_inconsistency", "position_ci_low",
                                                  "position_ci_high"]].values])
            .pivot(index="judge", columns="condition", values="value")
            .reindex(index=pd.unique(p["judge"]), columns=pd.unique(p["condition"]))
            .reset_index())]
        means = p.groupby("condition", sort=False)["position_inconsistency"].mean()
        parts += ["", "Mean over judges: " + ", ".join(
            f"{c} {100 * v:.1f}%" for c, v in means.items()) + "."]
    if tie_probe is not None and len(tie_probe):
        t = tie_probe
        parts += ["", "## Tie probes", "", _markdown(pd.DataFrame({
            "judge": t["judge"], "condition": t["condition"],
            "languages": t["language_1"] + " / " + t["language_2"], "probes": t["n"],
            "ties": [_rate(*r) for r in t[["tie_share", "tie_share_ci_low",
                                           "tie_share_ci_high"]].values],
            "language_2 share of non-ties": [_rate(*r) for r in t[[
                "non_tie_language_2_share", "non_tie_ci_low", "non_tie_ci_high"]].values]}))]
    if audit is not None and len(audit):
        flagged = audit.loc[audit["flagged"]]
        counts = ", ".join(f"{c} {int(audit[c].sum())}" for c in
                           ["empty", "lost_numbers", "number_count_change", "shrinkage"])
        parts += ["", "## Translation audit", "",
                  f"{len(flagged)} of {len(audit)} fields flagged "
                  f"({len(flagged[['item', 'subset']].drop_duplicates())} items): {counts}."]
    return "\n".join(parts) + "\n"


# --- synthetic protocol --------------------------------------------------------------------------
@dataclass(frozen=True)
class JudgeEffects:
    """Planted behaviour of one synthetic pairwise judge (probabilities).

    The first condition of ``accuracy`` is the reference. Per item and condition the judge forms a
    content choice, correct with probability ``accuracy[c]``; the target condition's choice
    differs from the reference's with probability ``flip[c]`` (the joint of the two correctness
    indicators is fixed by the two accuracies and ``flip``). Each shown order then gives, per
    judgment independently: Tie with probability ``tie_rate[c]``, otherwise the answer shown
    first (A) with probability ``position_bias[c]``, otherwise the content choice. On a tie probe
    (output 1 in language 1, output 2 its translation): Tie with probability ``probe_tie``,
    otherwise A with probability ``probe_position_bias``, otherwise output 2 with probability
    ``probe_prefer_2``.
    """
    accuracy: Mapping[str, float]
    flip: Mapping[str, float]
    position_bias: Mapping[str, float]
    tie_rate: Mapping[str, float]
    probe_tie: float = 0.95
    probe_prefer_2: float = 0.5
    probe_position_bias: float = 0.0

    def joint_correctness(self, target: str) -> np.ndarray:
        """``P[reference correct, target correct]`` as a 2 x 2 array (index 1 = correct)."""
        a_r, a_t, f = self.accuracy[self.reference], self.accuracy[target], self.flip[target]
        if not abs(a_r - a_t) - 1e-12 <= f <= min(a_r + a_t, 2 - a_r - a_t) + 1e-12:
            raise ValueError(f"flip[{target!r}] = {f} is impossible with accuracies {a_r} and "
                             f"{a_t}: need |a_ref - a_target| <= flip <= min(a_ref + a_target, "
                             "2 - a_ref - a_target)")
        p10, p01 = (f + a_r - a_t) / 2, (f - a_r + a_t) / 2
        return np.array([[1 - a_r - p01, p01], [p10, a_r - p10]])

    @property
    def reference(self) -> str:
        return next(iter(self.accuracy))


def default_judges() -> dict[str, JudgeEffects]:
    """Two judges shaped like the Judge-LS findings: best in English, ~10-15% flips, position
    inconsistency rising en -> cs, tie probes mostly Tie, translation (zh) winning more non-ties."""
    return {
        "judge_a": JudgeEffects(accuracy={"en": 0.93, "zh": 0.89, "cs": 0.90},
                                flip={"zh": 0.04, "cs": 0.03},
                                position_bias={"en": 0.10, "zh": 0.11, "cs": 0.16},
                                tie_rate={"en": 0.01, "zh": 0.015, "cs": 0.015},
                                probe_tie=0.95, probe_prefer_2=0.70, probe_position_bias=0.10),
        "judge_b": JudgeEffects(accuracy={"en": 0.91, "zh": 0.86, "cs": 0.88},
                                flip={"zh": 0.05, "cs": 0.03},
                                position_bias={"en": 0.09, "zh": 0.10, "cs": 0.14},
                                tie_rate={"en": 0.01, "zh": 0.01, "cs": 0.01},
                                probe_tie=0.97, probe_prefer_2=0.60, probe_position_bias=0.05),
    }


def _choice_probs(content: int, order: str, tie: float, bias: float) -> dict[str, float]:
    """Distribution of the normalised choice given the content choice (1 or 2) and the order."""
    first = "1" if order == "original" else "2"
    probs = {"1": 0.0, "2": 0.0, "Tie": tie}
    probs[first] += (1 - tie) * bias
    probs[str(content)] += (1 - tie) * (1 - bias)
    return probs


def _truth(judges: Mapping[str, JudgeEffects], probe_languages) -> dict[str, pd.DataFrame]:
    """Exact expected rates implied by the planted parameters (enumeration of the finite states).

    Gold is 1 or 2 and the two orders are equally likely; unparseable verdicts occur
    independently of everything, so rates among parseable verdicts are unaffected.
    """
    accuracy, flips, position, probe = [], [], [], []
    for name, e in judges.items():
        ref = e.reference
        for c in e.accuracy:
            strict = 0.0
            for correct, p_correct in ((True, e.accuracy[c]), (False, 1 - e.accuracy[c])):
                for g in (1, 2):
                    for order in ORDERS:
                        probs = _choice_probs(g if correct else 3 - g, order, e.tie_rate[c],
                                              e.position_bias[c])
                        strict += 0.25 * p_correct * probs[str(g)]
            tie_half = strict + 0.5 * e.tie_rate[c]
            accuracy.append((name, c, strict, tie_half))
            orig = _choice_probs(1, "original", e.tie_rate[c], e.position_bias[c])
            swap = _choice_probs(1, "swapped", e.tie_rate[c], e.position_bias[c])
            position.append((name, c, 1 - sum(orig[x] * swap[x] for x in orig)))
        for c in e.flip:
            joint = e.joint_correctness(c)
            flip = gold_flip = 0.0
            for (cr, ct), p in np.ndenumerate(joint):
                for g in (1, 2):
                    for order in ORDERS:
                        w = p * 0.25
                        pr = _choice_probs(g if cr else 3 - g, order, e.tie_rate[ref],
                                           e.position_bias[ref])
                        pt = _choice_probs(g if ct else 3 - g, order, e.tie_rate[c],
                                           e.position_bias[c])
                        flip += w * (1 - sum(pr[x] * pt[x] for x in pr))
                        gold_flip += w * (pr[str(g)] * (1 - pt[str(g)])
                                          + (1 - pr[str(g)]) * pt[str(g)])
            flips.append((name, ref, c, flip, gold_flip))
        first_share = (1 - e.probe_tie) * (e.probe_position_bias * 0.5
                                           + (1 - e.probe_position_bias) * (1 - e.probe_prefer_2))
        second_share = (1 - e.probe_tie) - first_share
        lang1, lang2 = probe_languages
        shares = {lang1: first_share, lang2: second_share}
        low, high = sorted(probe_languages)
        probe.append((name, "tie_probe", low, high, shares[low], shares[high], e.probe_tie,
                      shares[high] / (1 - e.probe_tie)))
    return {
        "accuracy": pd.DataFrame(accuracy, columns=["judge", "condition", "strict_accuracy",
                                                    "tie_half_accuracy"]),
        "flips": pd.DataFrame(flips, columns=["judge", "reference", "target", "flip_rate",
                                              "gold_flip_rate"]),
        "position": pd.DataFrame(position, columns=["judge", "condition", "position_inconsistency"]),
        "tie_probe": pd.DataFrame(probe, columns=["judge", "condition", "language_1", "language_2",
                                                  "language_1_share", "language_2_share",
                                                  "tie_share", "non_tie_language_2_share"]),
    }


def simulate_judge_ls(seed: int, n_items: int = 400,
                      judges: Mapping[str, JudgeEffects] | None = None,
                      subsets: tuple[str, ...] = ("natural", "adversarial"),
                      probe_languages: tuple[str, str] = ("en", "zh"),
                      unparseable_rate: float = 0.01):
    """Seeded synthetic Judge-LS protocol with planted effects, and its ground truth.

    Every judge (``JudgeEffects``; default :func:`default_judges`) judges ``n_items`` items with
    gold 1 or 2 (equally likely; items assigned to ``subsets`` in turn) in each of its conditions
    (en / zh / cs by default) and both orders, plus one tie probe per item (condition
    ``tie_probe``, output 1 in ``probe_languages[0]``, output 2 its translation in
    ``probe_languages[1]``) in both orders. A fraction ``unparseable_rate`` of verdicts is
    replaced by unparseable text.

    Returns ``(verdicts, truth)``: a validated verdict table and a dict of tidy frames with the
    exact expectations implied by the parameters (see :func:`_truth`): ``accuracy`` (judge,
    condition, strict_accuracy, tie_half_accuracy), ``flips`` (judge, reference, target,
    flip_rate, gold_flip_rate), ``position`` (judge, condition, position_inconsistency) and
    ``tie_probe`` (the shares of :func:`tie_probe_table`).
    """
    judges = default_judges() if judges is None else judges
    rng = np.random.default_rng(seed)
    items = np.arange(n_items)
    gold = rng.integers(1, 3, size=n_items)
    subset = np.asarray(subsets)[items % len(subsets)]
    letters = {"original": np.array(["", "A", "B"]), "swapped": np.array(["", "B", "A"])}
    frames = []

    def judgments(name, condition, choice_content, tie, bias, order, gold_labels):
        u = rng.random(n_items)
        verdict = np.where(u < tie, "Tie", np.where(u < tie + (1 - tie) * bias, "A",
                                                     letters[order][choice_content]))
        verdict = np.where(rng.random(n_items) < unparseable_rate,
                           rng.choice(["", "N/A", "both are good"], size=n_items), verdict)
        frames.append(pd.DataFrame({"item": items, "subset": subset, "judge": name,
                                    "condition": condition, "order": order, "verdict": verdict,
                                    "gold": gold_labels}))

    for name, e in judges.items():
        correct = {e.reference: rng.random(n_items) < e.accuracy[e.reference]}
        for c in e.flip:
            joint = e.joint_correctness(c)
            p_given = np.where(correct[e.reference], joint[1, 1] / joint[1].sum(),
                               joint[0, 1] / joint[0].sum())
            correct[c] = rng.random(n_items) < p_given
        for c, ok in correct.items():
            content = np.where(ok, gold, 3 - gold)
            for order in ORDERS:
                judgments(name, c, content, e.tie_rate[c], e.position_bias[c], order, gold)
        for order in ORDERS:
            content = np.where(rng.random(n_items) < e.probe_prefer_2, 2, 1)
            judgments(name, "tie_probe", content, e.probe_tie, e.probe_position_bias, order, "Tie")
    verdicts = pd.concat(frames, ignore_index=True)
    probes = verdicts["gold"] == "Tie"
    verdicts["probe_language_1"] = np.where(probes, probe_languages[0], None)
    verdicts["probe_language_2"] = np.where(probes, probe_languages[1], None)
    return validate_verdicts(verdicts, "synthetic Judge-LS"), _truth(judges, probe_languages)


_WORDS = ("answer", "output", "the", "instruction", "list", "value", "result", "explain",
          "because", "table", "write", "function", "total", "step", "each", "number", "order")


def simulate_audit_texts(seed: int, items: pd.DataFrame, kind: str = "full",
                         n_per_defect: int = 2, fields=("input", "output_1", "output_2")):
    """Reference texts and translated variants with planted defects, for :func:`translation_audit`.

    Each (item, subset, field) of ``items`` gets an English-like reference of 60 words with five
    numbers. A clean ``full`` variant maps every word to one CJK character (length ratio about
    0.35); a clean ``code_switched`` variant replaces every other word (ratio about 0.6); numbers
    are kept. ``n_per_defect`` distinct fields per defect get: ``empty`` (empty variant),
    ``lost_numbers`` (digits removed), ``number_count_change`` (three of five numbers removed),
    ``shrinkage`` (only the numbers remain). Returns ``(reference, variant, planted)``; planted
    has item, subset, field, defect, and the audit must flag exactly those fields (each with the
    flag named by its defect).
    """
    rng = np.random.default_rng(seed)
    keys = items[["item", "subset"]].drop_duplicates().astype(str)
    keys = keys.merge(pd.DataFrame({"field": list(fields)}), how="cross")
    defects = ("empty", "lost_numbers", "number_count_change", "shrinkage")
    if len(defects) * n_per_defect > len(keys):
        raise ValueError(f"need at least {len(defects) * n_per_defect} fields for the defects")
    reference, variant = [], []
    for _ in range(len(keys)):
        words = list(rng.choice(_WORDS, size=60))
        numbers = [str(x) for x in rng.integers(1, 1000, size=5)]
        for position, number in zip(rng.choice(60, size=5, replace=False), numbers):
            words[position] = number
        reference.append(" ".join(words))
        variant.append(" ".join(w if w.isdigit() or (kind == "code_switched" and i % 2)
                                else chr(0x4E00 + _WORDS.index(w)) for i, w in enumerate(words)))
    chosen = rng.choice(len(keys), size=len(defects) * n_per_defect, replace=False)
    planted = keys.iloc[chosen].assign(defect=np.repeat(defects, n_per_defect))
    for row, defect in zip(chosen, planted["defect"]):
        text = variant[row]
        numbers = _NUMBER.findall(text)
        if defect == "empty":
            variant[row] = ""
        elif defect == "lost_numbers":
            variant[row] = _NUMBER.sub("", text)
        elif defect == "number_count_change":
            variant[row] = _NUMBER.sub("", text, count=3)
        else:
            variant[row] = " ".join(numbers)
    return (keys.assign(text=reference), keys.assign(text=variant),
            planted.reset_index(drop=True))


# --- synthetic recovery ---------------------------------------------------------------------------
RECOVERY_COLUMNS = ["table", "judge", "condition", "quantity", "truth", "estimate", "ci_low",
                    "ci_high", "covered"]
# (table, keys, quantity, prefix of its interval columns)
_RECOVERED = [("accuracy", ["judge", "condition"], "strict_accuracy", "strict"),
              ("position", ["judge", "condition"], "position_inconsistency", "position"),
              ("flips", ["judge", "reference", "target"], "flip_rate", "flip"),
              ("tie_probe", ["judge", "condition"], "tie_share", "tie_share"),
              ("tie_probe", ["judge", "condition"], "non_tie_language_2_share", "non_tie")]


def recovery_table(tables: Mapping[str, pd.DataFrame], truth: Mapping[str, pd.DataFrame]
                   ) -> pd.DataFrame:
    """Each planted value of :func:`simulate_judge_ls` beside its estimate and interval.

    ``tables``: the accuracy, position, flips and tie_probe tables (pooled rows, subset and order
    ``all``, are compared); ``truth``: the simulation's truth frames. Columns
    :data:`RECOVERY_COLUMNS`; ``covered`` says whether the interval holds the planted value.
    """
    rows = []
    for name, keys, quantity, prefix in _RECOVERED:
        estimate = tables[name]
        for pooled in ("subset", "order"):
            if pooled in estimate:
                estimate = estimate[estimate[pooled] == ALL]
        merged = pd.DataFrame(truth[name])[keys + [quantity]].merge(
            estimate, on=keys, suffixes=("_truth", ""))
        for row in merged.to_dict(orient="records"):
            low, high = row[f"{prefix}_ci_low"], row[f"{prefix}_ci_high"]
            value = row[f"{quantity}_truth"]
            rows.append({"table": name, "judge": row["judge"],
                         "condition": row.get("condition", row.get("target")),
                         "quantity": quantity, "truth": value, "estimate": row[quantity],
                         "ci_low": low, "ci_high": high, "covered": low <= value <= high})
    return pd.DataFrame(rows, columns=RECOVERY_COLUMNS)


def audit_variants(reference_texts: pd.DataFrame, variants: Mapping[str, tuple],
                   thresholds: AuditThresholds = AuditThresholds()) -> pd.DataFrame:
    """:func:`translation_audit` of every variant, ``variants``: condition -> (texts, kind),
    stacked with a ``condition`` column; an empty frame when there are no variants."""
    frames = [translation_audit(reference_texts, texts, kind, thresholds).assign(condition=c)
              for c, (texts, kind) in variants.items()]
    if not frames:
        return pd.DataFrame(columns=["condition", *TEXT_KEYS, "flagged"])
    return pd.concat(frames, ignore_index=True)


# `judgecal.judge_ls(...)` runs the public API function (judgecal.api.judge_ls)
from .api import analysis_module as _analysis_module  # noqa: E402

_analysis_module(__name__)
