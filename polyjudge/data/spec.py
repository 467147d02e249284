"""How to read a user's run table: :class:`RunSpec`, the column names and validation settings
that every public function takes as the same flat keywords, written once."""
from __future__ import annotations

from dataclasses import dataclass, fields

import pandas as pd

from . import column_names, io
from .panel import Panel

COLUMNS = ("task", "language", "backbone", "score", "framework")

RUN_TABLE_PARAMETERS = """\
task, language, backbone, score, framework : str, optional
    The run table's columns holding each standard field (default: the standard name);
    ``framework`` names repeated runs of a cell (no such column: one run per cell).
languages, backbones : sequence of str, optional
    Order of the language and backbone axes; every label of the runs, each once
    (default: natural sort).
score_range : (float, float), optional
    Scores must lie in ``[low, high]`` (default: no bound).
missing : {"error", "omit"}, default "error"
    NaN scores and empty task x language x backbone cells: stop, or leave them out.
source : str or path, default "runs"
    The name error messages give the table (:class:`~polyjudge.data.errors.InputError`)."""
"""The numpydoc lines of the run-table keywords, shared by every public function's docstring."""


@dataclass(frozen=True)
class RunSpec:
    """Where a run table keeps its fields and how it is checked.

    One row per judge run; the fields name the user's columns and the validation of
    :func:`polyjudge.data.io.validate_runs` and :func:`polyjudge.data.io.build_panel`.

    Parameters
    ----------
    """

    task: str = "task"
    """Column of the task (prompt) identifier."""
    language: str = "language"
    """Column of the language the task was posed in."""
    backbone: str = "backbone"
    """Column of the judged backbone (model)."""
    score: str = "score"
    """Column of the numeric score of the run."""
    framework: str = "framework"
    """Column of the repeated run of a cell (absent: one run per cell)."""
    languages: tuple | None = None
    """Order of the language axis (None: natural sort)."""
    backbones: tuple | None = None
    """Order of the backbone axis (None: natural sort)."""
    score_range: tuple | None = None
    """``(low, high)`` the scores must lie in (None: no bound)."""
    missing: str = "error"
    """``"error"``: NaN scores and empty cells stop; ``"omit"``: they are left out."""
    source: object = "runs"
    """What error messages call the table (a name or a path)."""

    @classmethod
    def from_kwargs(cls, **kwargs) -> "RunSpec":
        """A spec of the run-table keywords among ``kwargs`` (others are ignored), so a public
        function passes its ``locals()`` in one line."""
        names = {field.name for field in fields(cls)}
        return cls(**{name: value for name, value in kwargs.items() if name in names})

    @property
    def columns(self) -> dict[str, str]:
        """Standard name -> the user's column."""
        return {name: getattr(self, name) for name in COLUMNS}

    @property
    def settings(self) -> dict:
        """Every field but ``source``, name -> value: the keywords of a function or of
        :class:`polyjudge.Calibrator` that take a run table later."""
        return {field.name: getattr(self, field.name) for field in fields(self)
                if field.name != "source"}

    def standard(self, runs: pd.DataFrame, score_range=None) -> pd.DataFrame:
        """``runs`` renamed to the standard columns and validated (keys, numeric scores in
        ``score_range``, default the spec's; NaN scores an error unless ``missing="omit"``)."""
        if not isinstance(runs, pd.DataFrame):
            raise TypeError(f"runs must be a pandas DataFrame, got {type(runs).__name__}")
        score_range = self.score_range if score_range is None else score_range
        column_names.check_unique(self.source, list(runs.columns), io.renaming(self.columns))
        return io.validate_runs(io.rename_columns(runs, self.columns), self.source, score_range,
                                self.missing, mapping=self.columns)

    def prepare(self, runs: pd.DataFrame) -> tuple[pd.DataFrame, Panel]:
        """The standard run table and its task-level :class:`~polyjudge.data.panel.Panel`:
        runs averaged per task x language x backbone cell in the spec's axis order (missing
        cells allowed only with ``missing="omit"``)."""
        checked = self.standard(runs)
        panel = io.build_panel(checked, self.source, self.languages, self.backbones,
                               allow_missing_cells=self.missing == "omit",
                               mapping=self.columns)
        return checked, panel


RunSpec.__doc__ = RunSpec.__doc__.rstrip() + "\n" + "".join(
    f"    {line}\n" if line else "\n" for line in RUN_TABLE_PARAMETERS.splitlines())
