"""polyjudge: measuring and calibrating multilingual LLM judges (CBC and Judge-LS).

The public API (stable, :data:`__all__`; see docs/api.md): :func:`read_runs` (run tables from
files: many files, fields from paths, JSON Lines), :func:`read_inspect_logs` (a run or verdict
table from Inspect AI eval logs), :func:`calibrate`, :func:`heldout`,
:func:`reversal`, :func:`cmi_test` on a long run table, :func:`judge_ls` on a verdict table and
:func:`judge_card` (is each judge right, in each language?) on one,
each returning a small result with tidy DataFrames and ``plot()``.

The subpackages and what each may import: docs/README.md#package-map.
"""
from ._version import __version__
from .api import (CMI, Calibration, Heldout, JudgeLS, Reversal, calibrate, cmi_test, heldout,
                  judge_ls, prepare_runs, reversal)
from .analyses.card import JudgeCard
from .audit import judge_card
from .calibrator import Calibrator
from .data.inspect_logs import read_inspect_logs
from .data.panel import Panel
from .data.sources import read_runs

__all__ = ["read_runs", "read_inspect_logs", "calibrate", "heldout", "reversal", "cmi_test",
           "judge_ls", "prepare_runs", "Calibrator", "Calibration", "Heldout", "Reversal", "CMI",
           "JudgeLS", "Panel", "judge_card", "JudgeCard"]
