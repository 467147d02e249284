"""Judge-LS: language-switching and position invariance of pairwise LLM judges.

Judge-LS paper ("Does the Judge Prefer English? Evaluating Language-Switching Invariance in
LLM-as-a-Judge", arXiv 2606.14278), protocol of docs/methods.md section 8.

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

Modules: :mod:`.verdicts` (reading, validating, normalising), :mod:`.intervals` (Wilson and
item-clustered intervals, paired tests), :mod:`.metrics` (the metric tables), :mod:`.audit`
(translation checks), :mod:`.summary` (Markdown report), :mod:`.synthetic` (the planted protocol
and its recovery). Import the tables from here: ``from polyjudge.analyses import judge_ls;
judge_ls.flip_table(...)``; ``polyjudge.judge_ls`` is the function that runs the whole protocol
(:func:`polyjudge.judge_ls`), and no module is named ``polyjudge.judge_ls``.
"""
from .audit import (
                    AUDIT_KINDS,
                    TEXT_KEYS,
                    AuditThresholds,
                    audit_variants,
                    flip_sensitivity,
                    translation_audit,
)
from .intervals import (
                    cluster_robust_variance,
                    clustered_mcnemar_p,
                    clustered_wilson_interval,
                    design_effect,
                    mcnemar_exact_p,
                    wilson_interval,
)
from .metrics import accuracy_table, flip_table, position_table, tie_probe_table
from .summary import summary_markdown
from .synthetic import (
                    RECOVERY_COLUMNS,
                    JudgeEffects,
                    default_judges,
                    recovery_table,
                    simulate_audit_texts,
                    simulate_judge_ls,
)
from .verdicts import (
                    ALL,
                    DUPLICATE_POLICIES,
                    ORDERS,
                    PROBE_COLUMNS,
                    VERDICT_COLUMNS,
                    VERDICT_KEYS,
                    load_llmbar,
                    normalise_choices,
                    validate_verdicts,
)

__all__ = [
    "ALL", "AUDIT_KINDS", "DUPLICATE_POLICIES", "ORDERS", "PROBE_COLUMNS", "RECOVERY_COLUMNS",
    "TEXT_KEYS", "VERDICT_COLUMNS", "VERDICT_KEYS", "AuditThresholds", "JudgeEffects",
    "accuracy_table", "audit_variants", "cluster_robust_variance", "clustered_mcnemar_p",
    "clustered_wilson_interval", "design_effect", "default_judges", "flip_sensitivity",
    "flip_table",
    "load_llmbar", "mcnemar_exact_p", "normalise_choices", "position_table", "recovery_table",
    "simulate_audit_texts", "simulate_judge_ls", "summary_markdown", "tie_probe_table",
    "translation_audit", "validate_verdicts", "wilson_interval",
]
