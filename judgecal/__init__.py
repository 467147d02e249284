"""judgecal: measuring and calibrating multilingual LLM judges (CBC and Judge-LS).

One module per concept of the CBC paper: ``panel`` (the labelled score tensor), ``io``
(ingest and validation), ``synthetic`` (planted-truth panels), ``estimator`` (CBC),
``bootstrap`` and ``baselines`` (held-out evaluation), ``reversal``, ``information``,
``ablations``, ``external`` (M-RewardBench), ``judge_ls``; ``judges`` calls LLM judges to
collect Judge-LS verdicts and pointwise panels (docs/judges.md).
"""
from .panel import Panel

__all__ = ["Panel"]
__version__ = "0.1.0"
