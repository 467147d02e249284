"""Judge-LS verdict tables: reading, validating and normalising pairwise judgments
(docs/methods.md section 8)."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ...data.errors import InputError, file_rows
from ...data.io import read_table

VERDICT_KEYS = ["item", "subset", "judge", "condition", "order"]
VERDICT_COLUMNS = VERDICT_KEYS + ["verdict", "gold"]
PROBE_COLUMNS = ["probe_language_1", "probe_language_2"]
ORDERS = ("original", "swapped")
DUPLICATE_POLICIES = ("error", "drop_first")
ALL = "all"


def validate_verdicts(frame: pd.DataFrame, source: str, conditions=None,
                      on_duplicate: str = "error") -> pd.DataFrame:
    """Check a verdict table and return it with canonical values (keys and gold as strings).

    Raises :class:`polyjudge.data.errors.InputError` naming ``source``, the offending rows and what
    was expected, for: missing columns or key values, ``order`` not original/swapped, ``gold`` not
    1/2/Tie, the reserved subset name ``all``, a tie probe without its probe languages, a condition
    outside ``conditions`` (when given), and duplicate (item, subset, judge, condition, order)
    judgments. ``on_duplicate="drop_first"`` instead keeps the first judgment in file order and
    drops the later ones (with a warning giving the count). Verdicts are not checked here:
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
                             f"{PROBE_COLUMNS} filled on every gold Tie row",
                             file_rows(out, blank))
    if conditions is not None:
        unknown = ~out["condition"].isin([str(c) for c in conditions])
        if unknown.any():
            names = sorted(out.loc[unknown, "condition"].unique())
            raise InputError(source, f"unknown condition(s) {names}",
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

    original order: A -> 1, B -> 2; swapped order: A -> 2, B -> 1; Tie -> Tie (docs/methods.md
    section 8). Unparseable verdicts get ``choice`` NaN and ``valid`` False. Expects a validated
    table.
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
