"""The conditions of ``polyjudge check`` held against the numbers: pure functions from a
condition and a table (or a panel) to one :class:`Check` per cell the condition names.

A threshold holds ``by: interval`` (the default) when the whole interval lies on its side,
``at_least <= ci_low`` and ``ci_high <= at_most``, and ``by: estimate`` when the estimate does.
A number that is not defined (a kappa with one verdict only, an interval most replicates do not
define) does not hold. A reversal condition holds when no backbone pair reverses significantly:
between two named languages, the test of docs/methods.md section 4 on the panel restricted to
them (the witnesses are then those two languages; Benjamini-Hochberg over the backbone pairs);
with ``languages: "*"``, the panel's own test over all its languages (``reversal/pairs.csv``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..analyses.card import ALL_LANGUAGES
from ..analyses.card.card import HEADLINES
from ..analyses.reversal import rank_reversal
from ..data.errors import InputError, did_you_mean
from ..data.panel import Panel


@dataclass(frozen=True)
class Check:
    """One cell of one condition: ``number`` (the condition's, from 1), ``kind``, ``label``
    (panel, language, judge, measure...), ``estimate`` with its interval ``low`` / ``high``
    (NaN where there is none), the ``threshold`` in words, whether it ``passed``, a ``note``
    (why a number is missing, which pairs reverse) and the ``source`` file."""

    number: int
    kind: str
    label: str
    estimate: float
    low: float
    high: float
    threshold: str
    passed: bool
    note: str = ""
    source: str = ""

    @property
    def status(self) -> str:
        return "PASS" if self.passed else "FAIL"

    def line(self) -> str:
        """The check in one line: the number, its interval, the threshold, PASS or FAIL."""
        if self.kind == "reversal":
            said = f"{number(self.estimate)} significant"
        elif math.isnan(self.estimate):
            said = "undefined"
        else:
            said = number(self.estimate) + (
                f", interval {number(self.low)} to {number(self.high)}"
                if not (math.isnan(self.low) or math.isnan(self.high)) else ", no interval")
        note = f" ({self.note})" if self.note else ""
        return (f"{self.number} {self.kind} {self.label}: {said}{note}; needs {self.threshold}:"
                f" {self.status}")


def number(value: float) -> str:
    """A number as the lines print it: four significant digits."""
    return f"{value:.4g}"


def pick(frame: pd.DataFrame, column: str, wanted, source: str, key: str,
         pooled: bool = False, every: bool = True) -> pd.DataFrame:
    """The rows whose ``column`` is ``wanted`` (a label, a list of them, or, where ``every``,
    ``*``: every one, but not the pooled ``all languages`` row unless ``pooled``); a label the
    table does not have stops naming the condition's ``key`` and the labels it has."""
    values = [str(v) for v in pd.unique(frame[column])]
    if wanted == "*" and every:
        return frame[frame[column].astype(str) != ALL_LANGUAGES] if not pooled else frame
    wanted = [wanted] if isinstance(wanted, str) else list(wanted)
    unknown = [w for w in wanted if w not in values]
    if unknown:
        near = did_you_mean(unknown[0], values)
        raise InputError(source, f"no {column} {unknown[0]!r} ({key}: {unknown[0]})",
                         f"one of {', '.join(values)}" + (' or "*"' if every else "")
                         + (f"; did you mean {near!r}?" if near else ""))
    return frame[frame[column].astype(str).isin(wanted)]


def _threshold(condition: dict) -> str:
    low, high = condition.get("at_least"), condition.get("at_most")
    by = condition.get("by", "interval")
    if low is not None and high is not None:
        return f"{by} within [{number(low)}, {number(high)}]"
    return f"{by} >= {number(low)}" if low is not None else f"{by} <= {number(high)}"


def holds(condition: dict, estimate: float, low: float, high: float) -> tuple[bool, str]:
    """Does a number (and its interval) meet the condition's ``at_least`` / ``at_most``, read
    ``by`` its interval or its estimate? With the reason when it cannot."""
    if math.isnan(estimate):
        return False, "not defined on these data"
    if condition.get("by", "interval") == "interval":
        if math.isnan(low) or math.isnan(high):
            return False, "no interval; `by: estimate` reads the estimate alone"
        bottom, top = low, high
    else:
        bottom = top = estimate
    floor, ceiling = condition.get("at_least"), condition.get("at_most")
    return (floor is None or bottom >= floor) and (ceiling is None or top <= ceiling), ""


def _numbers(number_: int, condition: dict, rows: pd.DataFrame, label, columns,
             source: str) -> list[Check]:
    if rows.empty:
        raise InputError(source, f"condition {number_} ({condition['check']}) names no row of "
                         "the table", "a judge and a language that have a row together")
    checks = []
    prefix = f"{condition['name']}: " if "name" in condition else ""
    for _, row in rows.iterrows():
        values = [float(row[c]) if pd.notna(row[c]) else math.nan for c in columns]
        passed, why = holds(condition, *values)
        checks.append(Check(number_, condition["check"], prefix + label(row), *values,
                            threshold=_threshold(condition), passed=passed, note=why,
                            source=source))
    return checks


def lead_measure(rows: pd.DataFrame) -> str | None:
    """The card's lead measure among ``rows`` (kappa, weighted kappa, else percent agreement:
    :data:`polyjudge.analyses.card.card.HEADLINES`), or None."""
    present = set(rows["measure"])
    return next((measure for measure, _ in HEADLINES if measure in present), None)


def agreement_checks(number_: int, condition: dict, panel: str, frame: pd.DataFrame,
                     source: str) -> list[Check]:
    """A judge's agreement with the reference (``versus``) in a language: one check per row of
    ``card/agreement.csv`` the condition names (``measure`` default: the card's lead one)."""
    versus = condition.get("versus", "reference")
    rows = pick(frame, "versus", versus, source, "versus", pooled=True, every=False)
    measure = condition.get("measure") or lead_measure(rows)
    if measure is None:
        raise InputError(source, f"no measure to read against {versus!r}",
                         "`measure:` naming one of the table's measures")
    rows = pick(rows, "measure", measure, source, "measure", pooled=True, every=False)
    rows = pick(rows, "judge", condition.get("judge", "*"), source, "judge", pooled=True)
    rows = pick(rows, "language", condition.get("language", "*"), source, "language")
    def label(r):
        return (f"{panel} {r['language']} {r['judge']} {measure}"
                + ("" if versus == "reference" else f" vs {versus}"))
    return _numbers(number_, condition, rows, label, ("estimate", "ci_low", "ci_high"), source)


def bias_checks(number_: int, condition: dict, panel: str, frame: pd.DataFrame,
                source: str) -> list[Check]:
    """A bias of a judge in a language (``card/bias.csv``), one check per row named."""
    rows = pick(frame, "bias", condition["bias"], source, "bias", pooled=True, every=False)
    rows = pick(rows, "judge", condition.get("judge", "*"), source, "judge", pooled=True)
    rows = pick(rows, "language", condition.get("language", "*"), source, "language")
    def label(r):
        return (f"{panel} {r['language']} {r['judge']} {r['bias']}"
                + (f" ({r['unit']})" if pd.notna(r["unit"]) and str(r["unit"]) else ""))
    return _numbers(number_, condition, rows, label, ("estimate", "ci_low", "ci_high"), source)


def mean_checks(number_: int, condition: dict, panel: str, frame: pd.DataFrame,
                source: str) -> list[Check]:
    """A judge's calibrated mean in a language (``cbc/leaderboard.csv``: ``mean_cbc`` and its
    task-bootstrap interval), one check per cell named."""
    rows = pick(frame, "backbone", condition["judge"], source, "judge", pooled=True)
    rows = pick(rows, "language", condition.get("language", "*"), source, "language")
    def label(r):
        return f"{panel} {r['language']} {r['backbone']} calibrated mean"
    return _numbers(number_, condition, rows, label,
                    ("mean_cbc", "mean_cbc_low", "mean_cbc_high"), source)


def two_languages(panel: Panel, languages, source: str) -> Panel:
    """The panel restricted to two named languages (in the panel's order)."""
    known = list(panel.languages)
    for language in languages:
        if language not in known:
            near = did_you_mean(language, known)
            raise InputError(source, f"no language {language!r} (languages: {list(languages)})",
                             f"two of {', '.join(map(str, known))}"
                             + (f"; did you mean {near!r}?" if near else ""))
    if languages[0] == languages[1]:
        raise InputError(source, f"languages: {list(languages)} names one language twice",
                         "two different languages")
    return panel.subset(languages=sorted(known.index(lang) for lang in languages))


def reversal_checks(number_: int, condition: dict, panel: str, found, fdr: float,
                    source: str) -> list[Check]:
    """No significant rank reversal between two languages (or any two, ``"*"``): ``found`` is
    the panel's ``reversal/pairs.csv`` or a task-level panel to test."""
    languages = condition["languages"]
    if isinstance(found, Panel):
        tested = found if languages == "*" else two_languages(found, languages, source)
        pairs = rank_reversal(tested, fdr)
    else:
        pairs = found
    reversed_ = pairs["reversed"].astype(str).str.lower() == "true"  # bool, or read as text
    significant = pairs[reversed_ & (pairs["q_value"] <= fdr)]
    shown = [f"{r['backbone_i']}/{r['backbone_j']} {r['witness_a']} {number(r['d_a'])} vs "
             f"{r['witness_b']} {number(r['d_b'])}, q {number(r['q_value'])}"
             for _, r in significant.head(3).iterrows()]
    note = f"of {len(pairs)} backbone pairs" + (f": {'; '.join(shown)}" if shown else "") + (
        f"; and {len(significant) - 3} more" if len(significant) > 3 else "")
    where = "any two languages" if languages == "*" else " vs ".join(languages)
    prefix = f"{condition['name']}: " if "name" in condition else ""
    return [Check(number_, "reversal", f"{prefix}{panel} {where}", float(len(significant)),
                  np.nan, np.nan, threshold=f"no significant reversal at FDR {number(fdr)}",
                  passed=significant.empty, note=note, source=source)]


def evaluate(conditions: list[dict], evidence) -> list[Check]:
    """Every condition held against ``evidence`` (a :class:`~.evidence.ResultsFolder` or
    :class:`~.evidence.RunTable`): the checks in the conditions' order. Bad input (a file, a
    column, a judge, a language or a measure that is not there) raises before any check is
    returned, so nothing is reported on half the conditions."""
    checks: list[Check] = []
    makers = {"agreement": agreement_checks, "bias": bias_checks, "mean": mean_checks}
    for index, condition in enumerate(conditions, start=1):
        if condition["check"] == "reversal":
            checks += reversal_checks(index, condition, *evidence.reversal(condition))
        else:
            checks += makers[condition["check"]](index, condition, *evidence.table(condition))
    return checks
