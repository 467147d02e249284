"""The judge card: is a judge right, in each language? Agreement with a reference and among
the judges, per language x judge, with cluster-bootstrap intervals and a test of whether it
differs between languages (docs/methods.md section 11).

``measures`` (agreement from contingency tables, vectorised), ``agreement`` (the tables per
language x judge, intervals and the language tests), ``card`` (the card of a panel)."""
from .agreement import ALL_LANGUAGES, language_tests, panel_agreement, reference_agreement
from .card import (JudgeCard, choice_verdicts, headline, judge_card, margin_verdicts,
                   reference_labels, requirement_verdicts)

__all__ = ["ALL_LANGUAGES", "JudgeCard", "choice_verdicts", "headline", "judge_card",
           "language_tests", "margin_verdicts", "panel_agreement", "reference_agreement",
           "reference_labels", "requirement_verdicts"]
