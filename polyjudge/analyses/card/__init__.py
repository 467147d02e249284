"""The judge card: is a judge right, in each language? Agreement with a reference and among
the judges, per language x judge, and the judges' biases (position, length, self-preference),
with cluster-bootstrap intervals and a test of whether each differs between languages
(docs/methods.md section 11).

``measures`` (agreement from contingency tables, vectorised), ``agreement`` (the tables per
language x judge, intervals and the language tests), ``bias`` (the biases from sums per
cluster, on the same bootstrap draws), ``card`` (the card of a panel)."""
from .agreement import ALL_LANGUAGES, language_tests, panel_agreement, reference_agreement
from .bias import (BIAS_COLUMNS, BIAS_TEST_COLUMNS, bias_tests, card_bias, length_bias,
                   position_bias, self_preference)
from .card import (JudgeCard, choice_verdicts, headline, judge_card, margin_verdicts,
                   reference_labels, requirement_verdicts, with_output_lengths)

__all__ = ["ALL_LANGUAGES", "BIAS_COLUMNS", "BIAS_TEST_COLUMNS", "JudgeCard", "bias_tests",
           "card_bias", "choice_verdicts", "headline", "judge_card", "language_tests",
           "length_bias", "margin_verdicts", "panel_agreement", "position_bias",
           "reference_agreement", "reference_labels", "requirement_verdicts",
           "self_preference", "with_output_lengths"]
