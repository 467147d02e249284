"""The few lines a finished ``snakemake`` run ends with (the Snakefile's ``onsuccess``): what was
computed, the claims count, where the results are and the command that builds the report."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from .claims import STATUSES

REPORT_COMMAND = "snakemake --report results/report.html"


def _written_since(folder: Path, since: float | None) -> int:
    if since is None or not folder.is_dir():
        return 0
    return sum(1 for path in folder.rglob("*") if path.is_file() and "logs" not in path.parts
               and path.stat().st_mtime >= since)


def claims_line(path: Path, since: float | None = None) -> str | None:
    """The claims count of ``results/claims.csv`` in words, or None when there is none."""
    if not path.is_file():
        return None
    table = pd.read_csv(path)
    counts = table["status"].value_counts()
    earlier = " (from an earlier run)" if since is not None and path.stat().st_mtime < since else ""
    markdown = path.with_suffix(".md")
    if counts.get("not computed", 0) == len(table):
        return (f"claims: none checked, as these panels are not the default reproduction's "
                f"({markdown}){earlier}")
    verbs = {"differs": "differ"}
    counted = ", ".join(f"{counts.get(s, 0)} {verbs.get(s, s)}" for s in STATUSES)
    return f"claims: {counted} of {len(table)} published values -> {markdown}{earlier}"


def run_summary(panels: dict, results="results", since: float | None = None,
                simulation: bool = False) -> str:
    """A short summary of a finished run: ``panels`` (name -> its analyses), the outputs under
    ``results`` written since ``since`` (a ``time.time()``; None: not counted), the claims count,
    the figures of these panels (and of the simulation study when it ran) and the report
    command. (Snakemake calls ``onsuccess`` only when jobs ran.)"""
    results = Path(results)
    written = _written_since(results, since)
    lines = ["polyjudge: finished. " + (f"{written} result file(s) written this run, under "
                                       f"{results}/ (docs/outputs.md describes each)."
                                       if written else f"Results under {results}/.")]
    if panels:
        shown = [f"{name} ({len(analyses)} analyses)" if len(analyses) != 1
                 else f"{name} ({analyses[0]})" for name, analyses in panels.items()]
        lines.append(f"  panels: {', '.join(shown)}")
    claims = claims_line(results / "claims.csv", since)
    if claims:
        lines.append(f"  {claims}")
    # only this config's panels: a folder may still hold panels of an earlier config
    folders = [*panels, *(["simulation"] if simulation else [])]
    figures = [path for name in folders for path in sorted(results.glob(f"{name}/figures/*.png"))]
    if figures:
        lines.append(f"  figures: {len(figures)} in {results}/<panel>/figures/ (PNG and SVG)")
    lines.append(f"  report: {REPORT_COMMAND}")
    return "\n".join(lines)
