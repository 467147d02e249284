"""The judge card of a panel: a panel's verdicts and its reference in the card's standard form,
and the card itself (agreement with the reference and among the judges, per language x judge,
with the test of a difference between languages)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...data.errors import InputError
from .agreement import (ALL_LANGUAGES, TEST_COLUMNS, language_tests, panel_agreement,
                        reference_agreement)
from .bias import BIAS_COLUMNS, BIAS_TEST_COLUMNS, card_bias
from .ranking import COLUMNS as RANKING_COLUMNS
from .ranking import rank_by_agreement
from .redundancy import redundancy

COLUMNS = ["language", "judge", "versus", "measure", "estimate", "ci_low", "ci_high",
           "n_items", "n_clusters"]
"""The columns of ``card/agreement.csv``."""


@dataclass(frozen=True)
class JudgeCard:
    """``agreement``: one row per language x judge x measure (``versus``: ``reference``, ``panel``
    or the other judge of a pair), estimate and cluster-bootstrap interval; ``language_tests``:
    per judge and measure against the reference, the Wald test of a difference between
    languages with its Benjamini-Hochberg q-value; ``has_reference``; ``bias``: one row per
    language x judge x bias (position, length, self_preference) the inputs allow, estimate,
    interval and ``unit``; ``bias_tests``: per judge and bias, the test of a difference between
    languages; ``bias_not_computed``: bias -> why the inputs do not allow it; ``redundancy``:
    error correlations, the effective number of judges and the majority's gain per language
    (:func:`~polyjudge.analyses.card.redundancy.redundancy`); ``ranking``: the judges ranked by
    agreement with the reference per language, with simultaneous rank sets (empty without a
    reference)."""

    agreement: pd.DataFrame
    language_tests: pd.DataFrame
    has_reference: bool
    bias: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=BIAS_COLUMNS))
    bias_tests: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=BIAS_TEST_COLUMNS))
    bias_not_computed: dict = field(default_factory=dict)
    redundancy: pd.DataFrame | None = None
    ranking: pd.DataFrame | None = None


def item_key(frame: pd.DataFrame, on) -> pd.Series:
    """One text key per row from the columns ``on`` (read as text, joined by ``|``), as a
    categorical: the text is built once per distinct key, not per row (a requirement table of
    10^7 verdicts has 10^5 requirements)."""
    on = list(on)
    if frame.empty:
        return pd.Series(pd.Categorical([]), index=frame.index)
    combined = np.zeros(len(frame), dtype=np.int64)
    for column in on:
        found, uniques = pd.factorize(frame[column], use_na_sentinel=False)
        combined = combined * len(uniques) + found
        combined = pd.factorize(combined)[0].astype(np.int64)  # stays below the row count
    found, first = np.unique(combined, return_index=True)
    keys = frame[on].iloc[first].astype(str).agg("|".join, axis=1).to_numpy()
    return pd.Series(pd.Categorical.from_codes(np.searchsorted(found, combined), keys),
                     index=frame.index)


def _labels(column: pd.Series) -> pd.Categorical:
    """A label column (language, judge, task) as a categorical of text."""
    return pd.Categorical(column).rename_categories(str) if len(column) else pd.Categorical(
        column.astype(str))


def requirement_verdicts(requirements: pd.DataFrame) -> pd.DataFrame:
    """A requirement table (``results/<panel>/requirements.parquet``) as verdicts: the item is
    framework | task | requirement_id, the cluster its task, the verdict ``satisfied``."""
    on = [c for c in ("framework", "task", "requirement_id") if c in requirements]
    return pd.DataFrame({"item": item_key(requirements, on).array,
                         "cluster": _labels(requirements["task"]),
                         "language": _labels(requirements["language"]),
                         "judge": _labels(requirements["backbone"]),
                         "verdict": requirements["satisfied"].to_numpy(float)})


CHOICE_CODES = {"1": 1.0, "2": 2.0, "Tie": 0.0}
"""A pairwise verdict as a category: the output chosen, or a tie (its own category, which never
agrees with a gold answer)."""


def choice_verdicts(choices: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """Pairwise judgments (``judge_ls/choices.parquet``) as verdicts and their reference: a
    unit is an item in one order (its cluster the item), the language its condition, the
    verdict the output chosen (a tie a category of its own), ``first_output`` the output shown
    first (1 in the original order, 2 swapped) and the reference the gold output. Tie probes
    (gold ``Tie``) and judgments without a usable verdict are left out."""
    gold = choices["gold"].astype(str)
    keep = gold.isin(["1", "2"]) & choices["valid"].astype(bool)
    rows = choices[keep]
    item = rows["subset"].astype(str) + "|" + rows["item"].astype(str)
    unit = item + "|" + rows["order"].astype(str)
    verdicts = pd.DataFrame({"item": unit.to_numpy(), "cluster": item.to_numpy(),
                             "language": rows["condition"].astype(str).to_numpy(),
                             "judge": rows["judge"].astype(str).to_numpy(),
                             "verdict": rows["choice"].astype(str).map(CHOICE_CODES).to_numpy(),
                             "first_output": np.where(rows["order"].astype(str) == "swapped",
                                                      2.0, 1.0)})
    reference = pd.Series(gold[keep].astype(float).to_numpy(), index=unit.to_numpy())
    return verdicts, reference[~reference.index.duplicated()]


def with_output_lengths(verdicts: pd.DataFrame, texts: pd.DataFrame, source: str
                        ) -> pd.DataFrame:
    """:func:`choice_verdicts` with ``log2_length_ratio``: log2 of the length of output 1 over
    that of output 2, in characters, from a table of the items' texts (``subset``,
    ``item_index``, ``output_1``, ``output_2``, as ``data/llmbar/items.parquet``). An item the
    table lacks, or an empty output, has no ratio (left out of the length bias). Refuses,
    naming the file, a missing column."""
    needed = ["subset", "item_index", "output_1", "output_2"]
    missing = [c for c in needed if c not in texts]
    if missing:
        raise InputError(source, f"no column {', '.join(map(repr, missing))}",
                         f"the items' texts in columns {needed} (card_bias.texts); the file "
                         f"has {list(texts.columns)}")
    with np.errstate(divide="ignore"):
        ratio = np.log2(texts["output_1"].astype(str).str.len().to_numpy(float)
                        / texts["output_2"].astype(str).str.len().to_numpy(float))
    ratio = pd.Series(np.where(np.isfinite(ratio), ratio, np.nan),
                      index=item_key(texts, ["subset", "item_index"]).to_numpy())
    ratio = ratio[~ratio.index.duplicated()]
    return verdicts.assign(log2_length_ratio=ratio.reindex(verdicts["cluster"]).to_numpy())


def margin_verdicts(runs: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """A preference panel's runs (margin = score of the chosen response - score of the
    rejected one) as verdicts on the chosen side: 1 (the chosen scored higher), 0 (a tie), -1
    (the rejected higher); the reference of every item is 1. Missing margins are left out."""
    rows = runs.dropna(subset=["score"])
    item = _labels(rows["task"])
    verdicts = pd.DataFrame({"item": item, "cluster": item,
                             "language": _labels(rows["language"]),
                             "judge": _labels(rows["backbone"]),
                             "verdict": np.sign(rows["score"].to_numpy(float))})
    return verdicts, pd.Series(1.0, index=pd.Index(item.categories[np.unique(item.codes)]))


def reference_labels(table: pd.DataFrame, settings: dict, source: str
                     ) -> tuple[pd.Series, pd.DataFrame]:
    """The reference (item -> label) of a ``reference_labels:`` block, and the verdicts of the
    other raters the same file holds (``rater_column`` other than ``reference_rater``), as
    judges in ``language``. Refuses, naming the file and the column, a missing column or an
    item with two reference labels."""
    on, label = list(settings["keys"]), settings["label"]
    rater = settings.get("rater_column")
    needed = on + [label] + ([rater] if rater else [])
    missing = [c for c in needed if c not in table]
    if missing:
        raise InputError(source, f"no column {', '.join(map(repr, missing))}",
                         f"the reference's columns {needed} (reference_labels.keys, .label, "
                         f".rater_column); the file has {list(table.columns)}")
    keys = item_key(table, on)
    is_reference = (table[rater].astype(str) == str(settings["reference_rater"])
                    if rater else pd.Series(True, index=table.index))
    reference = pd.Series(pd.to_numeric(table.loc[is_reference, label], errors="coerce")
                          .to_numpy(), index=keys[is_reference].to_numpy())
    repeated = reference.index[reference.index.duplicated()]
    if len(repeated):
        raise InputError(source, f"{len(repeated)} item(s) with two reference labels, e.g. "
                         f"{repeated[0]!r} ({', '.join(on)})",
                         "one reference label per item")
    others = table[~is_reference]
    cluster = "task" if "task" in on else on[0]  # as the panel's verdicts: a task's items
    extra = pd.DataFrame({"item": keys[~is_reference].to_numpy(),
                          "cluster": others[cluster].astype(str).to_numpy()
                          if len(others) else [],
                          "language": settings.get("language"),
                          "judge": others[rater].astype(str).to_numpy() if rater else [],
                          "verdict": pd.to_numeric(others[label], errors="coerce").to_numpy()})
    return reference, extra


def judge_card(verdicts: pd.DataFrame, reference: pd.Series | None = None,
               level: str = "nominal", replicates: int = 1000, seed: int = 0,
               confidence: float = 0.95, languages=None, judges=None,
               comparison: pd.DataFrame | None = None,
               families: dict | None = None) -> JudgeCard:
    """The card of ``verdicts`` (columns item, language, judge, verdict[, cluster]) against
    ``reference`` (item -> label; None: agreement among the judges only). ``comparison``:
    verdicts of other raters (e.g. the reference file's original judge), compared with the
    reference only, not counted in the panel's agreement. The biases come from the optional
    columns of ``verdicts`` (``first_output``, ``log2_length_ratio`` or ``log2_length``,
    ``author`` with ``families``: :func:`.bias.card_bias`)."""
    languages = list(languages) if languages is not None else list(
        pd.unique(verdicts["language"]))
    bias, bias_tests, not_computed = card_bias(verdicts, reference, families, replicates,
                                               seed, confidence, languages, judges)
    biases = {"bias": bias, "bias_tests": bias_tests, "bias_not_computed": not_computed}
    among = panel_agreement(verdicts, level, replicates, seed, confidence, languages, judges)
    among = among[among["n_items"] > 0]
    panel_judges = list(judges) if judges is not None else list(pd.unique(verdicts["judge"]))
    redundant = redundancy(verdicts, reference, level, replicates, seed, confidence, languages,
                           panel_judges)
    if reference is None or reference.dropna().empty:
        return JudgeCard(among[COLUMNS].reset_index(drop=True),
                         pd.DataFrame(columns=TEST_COLUMNS), False, **biases,
                         redundancy=redundant, ranking=pd.DataFrame(columns=RANKING_COLUMNS))
    if comparison is not None and len(comparison):
        judges = list(judges if judges is not None else pd.unique(verdicts["judge"]))
        judges += [j for j in pd.unique(comparison["judge"]) if j not in judges]
        verdicts = pd.concat([verdicts, comparison], ignore_index=True)
    with_reference, per_language = reference_agreement(verdicts, reference, level, replicates,
                                                       seed, confidence, languages, judges)
    with_reference = with_reference[with_reference["n_items"] > 0]
    tests = language_tests(with_reference, per_language, languages)
    tests = tests[tests["df"] > 0].reset_index(drop=True)
    agreement = pd.concat([with_reference, among], ignore_index=True)[COLUMNS]
    ranked = rank_by_agreement(with_reference, per_language, languages, confidence,
                               panel_judges)
    return JudgeCard(agreement, tests, True, **biases, redundancy=redundant, ranking=ranked)


HEADLINES = (("cohen_kappa", "kappa"), ("cohen_kappa_quadratic", "weighted kappa"),
             ("percent_agreement", "accuracy"))
"""The measure a card leads with, and its name: kappa, or the share of agreement where the
reference is one answer for every item (a preference's chosen side: kappa is undefined)."""


def headline(agreement: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """Per-language rows against the reference of the card's lead measure (the panel's judges
    and any comparison rater), and the measure's name."""
    against = agreement[(agreement["versus"] == "reference")
                        & (agreement["language"] != ALL_LANGUAGES)]
    for measure, label in HEADLINES:
        rows = against[against["measure"] == measure]
        if len(rows):
            return rows, label
    return against, "kappa"
