"""judgecal: measuring and calibrating multilingual LLM judges (CBC and Judge-LS).

The public API (stable, :data:`__all__`; see docs/api.md): :func:`calibrate`, :func:`heldout`,
:func:`reversal`, :func:`cmi_test` on a long run table and :func:`judge_ls` on a verdict table,
each returning a small result with tidy DataFrames and ``plot()``.

Building blocks, one module per concept of the CBC paper: ``panel`` (the labelled score tensor),
``io`` (ingest and validation), ``synthetic`` (planted-truth panels), ``estimator`` (CBC),
``bootstrap`` and ``baselines`` (held-out evaluation), ``reversal``, ``information``,
``ablations``, ``external`` (M-RewardBench), ``judge_ls``; ``judges`` calls LLM judges to
collect Judge-LS verdicts and pointwise panels (docs/judges.md). The modules ``heldout``,
``reversal`` and ``judge_ls`` are callable: calling one runs the API function of that name.
"""
import importlib

from .api import (CMI, Calibration, Heldout, JudgeLS, Reversal, calibrate, cmi_test,
                  prepare_runs)
from .panel import Panel

# API functions that share their name with an analysis module: the module itself, imported on
# first use (PEP 562) and callable (judgecal.api.analysis_module)
_CALLABLE_MODULES = ("heldout", "reversal", "judge_ls")

__all__ = ["calibrate", "heldout", "reversal", "cmi_test", "judge_ls", "prepare_runs",
           "Calibration", "Heldout", "Reversal", "CMI", "JudgeLS", "Panel"]
__version__ = "0.1.0"


def __getattr__(name):
    if name in _CALLABLE_MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_CALLABLE_MODULES))
