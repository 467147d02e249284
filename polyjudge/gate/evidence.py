"""Where the numbers of ``polyjudge check`` come from: a finished results folder (the files the
workflow wrote, read as they are) or a run table (computed here by the public functions).

Both give the same tables, in the columns of the workflow's outputs (docs/outputs.md):
``agreement`` (``card/agreement.csv``), ``bias`` (``card/bias.csv``), ``leaderboard``
(``cbc/leaderboard.csv``), and for the reversal the task-level panel and the panel's FDR level.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ..data import io
from ..data.errors import InputError, did_you_mean
from ..data.panel import Panel
from ..data.shape import is_skipped

AGREEMENT = ["language", "judge", "versus", "measure", "estimate", "ci_low", "ci_high",
             "n_items", "n_clusters"]
BIAS = ["language", "judge", "bias", "estimate", "ci_low", "ci_high", "n_items", "n_clusters",
        "unit"]
LEADERBOARD = ["language", "backbone", "mean_cbc", "mean_cbc_low", "mean_cbc_high"]
PAIRS = ["backbone_i", "backbone_j", "witness_a", "witness_b", "d_a", "d_b", "p_value",
         "q_value", "reversed", "significant"]
FILES = {"agreement": "card/agreement.csv", "bias": "card/bias.csv",
         "mean": "cbc/leaderboard.csv", "reversal": "reversal/pairs.csv"}
"""The file each kind of condition reads in a results folder."""


class ResultsFolder:
    """A finished results folder (``results/``, or one panel's folder ``results/<panel>``)."""

    def __init__(self, root):
        self.root = Path(root)
        self._read: dict = {}

    @staticmethod
    def holds(path) -> bool:
        """Is ``path`` a results folder (or a panel's folder in one) rather than run tables?"""
        path = Path(path)
        if not path.is_dir():
            return False
        return (path / "panels.json").is_file() or any(
            (folder / relative).is_file() for folder in [path, *path.iterdir()]
            if folder.is_dir() for relative in FILES.values())

    def panels(self) -> list[str]:
        """The panels of the run: those ``panels.json`` lists (the page's rule writes it, so
        folders another configuration left are not read), else every sub-folder."""
        listed = self.root / "panels.json"
        if listed.is_file():
            panels = json.loads(listed.read_text(encoding="utf-8")).get("panels")
            if not isinstance(panels, list):
                raise InputError(listed, "no list under `panels`", "the page rule's file: "
                                 '{"panels": [...]} (docs/outputs.md)')
            return [str(name) for name in panels]
        return sorted(p.name for p in self.root.iterdir() if p.is_dir())

    def _folder(self, condition: dict, kind: str) -> tuple[str, Path]:
        """The panel a condition reads and its folder: ``panel`` if given, else the one panel
        that has the kind's file (or the folder itself, when it is a panel's)."""
        relative = FILES[kind]
        if (self.root / relative).is_file() and condition.get("panel",
                                                             self.root.name) == self.root.name:
            return self.root.name, self.root  # a panel's own folder
        if "panel" in condition:
            name = condition["panel"]
            if not (self.root / name).is_dir() or name not in self.panels():
                near = did_you_mean(name, self.panels())
                raise InputError(self.root, f"no panel {name!r} (panel: {name})",
                                 f"one of {', '.join(self.panels())}"
                                 + (f"; did you mean {near!r}?" if near else ""))
            return name, self.root / name
        having = [n for n in self.panels() if (self.root / n / relative).is_file()]
        if not having and len(self.panels()) == 1:  # its missing file is named below
            having = self.panels()
        if len(having) != 1:
            raise InputError(self.root, f"{len(having)} panels have {relative}"
                             + (f" ({', '.join(having)})" if having else ""),
                             "`panel:` naming the panel of the condition" if having else
                             f"a results folder whose panel lists the analysis that writes "
                             f"{relative} (docs/outputs.md)")
        return having[0], self.root / having[0]

    def _csv(self, folder: Path, relative: str, columns, kind: str) -> pd.DataFrame:
        path = folder / relative
        if path not in self._read:
            if not path.is_file():
                raise InputError(path, "no such file",
                                 f"the {kind} condition reads {relative}: list the analysis "
                                 "that writes it for this panel (docs/outputs.md)")
            frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
            if is_skipped(frame):
                raise InputError(path, f"the analysis was skipped: {frame['skipped'].iloc[0]}",
                                 "a panel whose shape allows it")
            missing = [c for c in columns if c not in frame.columns]
            if missing:
                raise InputError(path, f"no column {', '.join(map(repr, missing))}",
                                 f"the columns {columns} (docs/outputs.md)")
            self._read[path] = frame
        return self._read[path]

    def table(self, condition: dict) -> tuple[str, pd.DataFrame, str]:
        """(panel, table, file) of an agreement, bias or mean condition."""
        kind = condition["check"]
        panel, folder = self._folder(condition, kind)
        columns = {"agreement": AGREEMENT, "bias": BIAS, "mean": LEADERBOARD}[kind]
        frame = self._csv(folder, FILES[kind], columns, kind)
        return panel, frame, str(folder / FILES[kind])

    def reversal(self, condition: dict) -> tuple[str, pd.DataFrame | Panel, float, str]:
        """(panel, pairs or panel, FDR level, file) of a reversal condition: with
        ``languages: "*"`` the workflow's ``reversal/pairs.csv``; with two named languages the
        task-level panel ``tensor.parquet`` to test them on (the FDR level of the panel's
        ``reversal/summary.json``, or the condition's ``fdr``)."""
        panel, folder = self._folder(condition, "reversal")
        summary = folder / "reversal" / "summary.json"
        fdr = condition.get("fdr")
        if fdr is None:
            if not summary.is_file():
                raise InputError(summary, "no such file", "the reversal analysis's outputs, "
                                 "or `fdr:` in the condition")
            fdr = json.loads(summary.read_text(encoding="utf-8")).get("fdr")
            if not isinstance(fdr, float):
                raise InputError(summary, "no number under `fdr`", "the reversal analysis's "
                                 "summary (docs/outputs.md), or `fdr:` in the condition")
        if condition["languages"] == "*":
            pairs = self._csv(folder, FILES["reversal"], PAIRS, "reversal")
            return panel, pairs, fdr, str(folder / FILES["reversal"])
        tensor = folder / "tensor.parquet"
        if not tensor.is_file():
            raise InputError(tensor, "no such file", "the panel's task-level tensor (rule "
                             "ingest), which the reversal between two languages is tested on")
        return panel, io.read_panel(tensor), fdr, str(tensor)


class RunTable:
    """A run table, with everything a condition needs computed from it by the public functions:
    :func:`polyjudge.calibrate` (the panel; the leaderboard's intervals from its task bootstrap),
    :func:`polyjudge.judge_card` (agreement with ``reference``), the reversal tests."""

    def __init__(self, runs: pd.DataFrame, source: str, reference: pd.DataFrame | None = None,
                 reference_source: str = "reference", label: str = "label",
                 level: str = "nominal", replicates: int = 1000, seed: int = 0):
        self.runs, self.source = runs, source
        self.reference, self.reference_source = reference, reference_source
        self.label, self.level, self.replicates, self.seed = label, level, replicates, seed
        self._made: dict = {}

    def _panel(self) -> Panel:
        if "panel" not in self._made:
            from .. import api
            self._made["panel"] = api.calibrate(self.runs, source=self.source).panel
        return self._made["panel"]

    def table(self, condition: dict) -> tuple[str, pd.DataFrame, str]:
        kind = condition["check"]
        name = Path(self.source).stem
        if kind == "bias":
            raise InputError(self.source, "a bias condition needs a results folder",
                             "the folder of a workflow run whose panel lists `card` "
                             "(card/bias.csv); a run table has no answers' lengths or authors")
        if kind == "agreement":
            if self.reference is None:
                raise InputError(self.source, "an agreement condition on a run table needs the "
                                 "reference labels", "--reference FILE (columns task and "
                                 "--label), or a results folder with card/agreement.csv")
            if "card" not in self._made:
                self._made["card"] = self._card()
            return name, self._made["card"], f"{self.source} (judge card)"
        if "leaderboard" not in self._made:
            from ..analyses.leaderboard import leaderboard
            if self.replicates < 100:
                raise InputError("--replicates", f"{self.replicates} replicates",
                                 "at least 100 for the calibrated means' intervals")
            self._made["leaderboard"] = leaderboard(self._panel(), None, self.replicates, 0.95,
                                                    self.seed)
        return name, self._made["leaderboard"], f"{self.source} (calibrated means)"

    def _card(self) -> pd.DataFrame:
        """The judge card of the runs: each run a verdict on the unit task | framework (a
        task's repeated runs are units of one cluster, the task), the reference the label of
        its task."""
        from ..audit import judge_card
        labels = dict(zip(self.reference["task"].astype(str), self.reference[self.label]))
        if len(labels) < len(self.reference):
            raise InputError(self.reference_source, "a task with two labels",
                             "one label per task")
        runs = self.runs.assign(unit=self.runs["task"].astype(str) + "|"
                                + self.runs["framework"].astype(str))
        units = runs.drop_duplicates("unit")
        reference = pd.DataFrame({"unit": units["unit"],
                                  "label": units["task"].astype(str).map(labels)})
        card = judge_card(runs, reference.dropna(), item="unit", judge="backbone",
                          verdict="score", cluster="task", level=self.level,
                          replicates=self.replicates, seed=self.seed, source=self.source)
        return card.agreement

    def reversal(self, condition: dict):
        return (Path(self.source).stem, self._panel(), condition.get("fdr", 0.05),
                self.source)
