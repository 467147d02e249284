"""Old import paths of the flat package (0.1), kept for one release with a DeprecationWarning.

``import polyjudge.io`` or ``from polyjudge.estimator import double_center`` still work and warn
with the new path; ``polyjudge.heldout``, ``polyjudge.reversal`` and ``polyjudge.judge_ls`` are the
public functions now, so their modules are reached only by the new paths
(``polyjudge.analyses.heldout``, ...). Remove this module in the next release.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings

MOVED = {
    "io": "data.io", "panel": "data.panel", "checksums": "data.checksums",
    "streaming": "data.streaming", "judgment_tree": "data.judgment_tree", "config": "data.config",
    "estimator": "cbc.estimator", "bootstrap": "cbc.bootstrap",
    "baselines": "analyses.baselines", "information": "analyses.information",
    "ablations": "analyses.ablations", "external": "analyses.external",
    "missing": "analyses.missing", "diagnostics": "analyses.diagnostics",
    "simulation": "analyses.simulation", "synthetic": "analyses.synthetic",
    "figures": "report.figures", "claims": "report.claims",
}
"""Old module name (under ``polyjudge.``) -> its place now."""


class _Forward(importlib.abc.Loader):
    """Loads an old module name as a thin module that forwards every attribute to the new one."""

    def __init__(self, new: str):
        self.new = new

    def create_module(self, spec):
        return None  # the default module object

    def exec_module(self, module: types.ModuleType) -> None:
        target = importlib.import_module(self.new)
        module.__getattr__ = lambda name: getattr(target, name)
        module.__dir__ = lambda: dir(target)
        module.__doc__ = f"Moved to {self.new}."


class _MovedFinder(importlib.abc.MetaPathFinder):
    def __init__(self, package: str):
        self.package = package

    def find_spec(self, name, path=None, target=None):
        head, _, leaf = name.rpartition(".")
        if head != self.package or leaf not in MOVED:
            return None
        new = f"{self.package}.{MOVED[leaf]}"
        warnings.warn(f"{name} moved to {new}; the old path will be removed in the next release",
                      DeprecationWarning, stacklevel=2)
        return importlib.util.spec_from_loader(name, _Forward(new))


def install(package: str) -> None:
    """Let ``package.<old name>`` imports find their new modules (once per interpreter)."""
    if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
        sys.meta_path.append(_MovedFinder(package))
