"""The few lines a ``snakemake`` run ends with: when it finished (the Snakefile's ``onsuccess``),
what was computed, the claims count, where the results and the results page are and the command
that builds the report; when it failed (``onerror``), each failed rule's own message, taken from
its log, so the cause is the last thing on screen rather than 1,000 lines up."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from .claims import STATUSES

REPORT_COMMAND = "snakemake --report results/report.html"
PAGE = "index.html"
FAILED_RULE = re.compile(r"^Error in rule (\S+):\n((?:    .*\n)*)", re.M)
LOG_LINE = re.compile(r"^    log: (.*?)(?: \(check log file\(s\) for error details\))?$", re.M)
RECORD = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ (\w+) \[[^\]]*\] ", re.M)
MESSAGE_LINES = 14  # a message longer than this is cut; the log has it whole


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
    earlier = (" (from an earlier run)" if since is not None and path.stat().st_mtime < since
               else "")
    markdown = path.with_suffix(".md")
    if counts.get("not computed", 0) == len(table):
        return (f"claims: none checked, as these panels are not the default reproduction's "
                f"({markdown}){earlier}")
    verbs = {"differs": "differ"}
    counted = ", ".join(f"{counts.get(s, 0)} {verbs.get(s, s)}" for s in STATUSES)
    return f"claims: {counted} of {len(table)} published values -> {markdown}{earlier}"


def _skipped(results: Path, name: str, analyses) -> str:
    """``, 2 skipped (...)``: the panel's listed analyses its shape did not allow, as ingest
    wrote them into shape.json; empty if none (or no shape.json)."""
    path = results / name / "shape.json"
    if not path.is_file():
        return ""
    reasons = json.loads(path.read_text(encoding="utf-8")).get("analyses", {})
    skipped = [a for a in analyses if reasons.get(a)]
    return (f", {len(skipped)} skipped: {', '.join(skipped)}; why: {path.parent}/logs/"
            "ingest.log" if skipped else "")


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
        shown = [(f"{name} ({len(analyses)} analyses" if len(analyses) != 1
                  else f"{name} ({analyses[0]}") + _skipped(results, name, analyses) + ")"
                 for name, analyses in panels.items()]
        lines.append(f"  panels: {', '.join(shown)}")
    claims = claims_line(results / "claims.csv", since)
    if claims:
        lines.append(f"  {claims}")
    # only this config's panels: a folder may still hold panels of an earlier config
    folders = [*panels, *(["simulation"] if simulation else [])]
    figures = [path for name in folders for path in sorted(results.glob(f"{name}/figures/*.png"))]
    if figures:
        lines.append(f"  figures: {len(figures)} in {results}/<panel>/figures/ (PNG and SVG)")
    page = results / PAGE
    if page.is_file():
        lines.append(f"  results page: {page} (open it in a browser)")
    lines.append(f"  report: {REPORT_COMMAND}")
    return "\n".join(lines)


def last_message(log_text: str) -> str:
    """The last error (else the last record) a rule script logged (:func:`polyjudge.scripting
    .run_step`'s format), without its time stamp; a log of another form: its last lines."""
    records = list(RECORD.finditer(log_text))
    errors = [r for r in records if r.group(1) in ("ERROR", "CRITICAL")] or records
    text = log_text[errors[-1].end():] if errors else log_text
    if errors and errors[-1] is not records[-1]:  # records logged after the error: not its
        text = log_text[errors[-1].end():records[records.index(errors[-1]) + 1].start()]
    lines = text.rstrip().splitlines() if errors else text.rstrip().splitlines()[-5:]
    return "\n".join(lines)


def failed_rules(snakemake_log: str) -> list[tuple[str, list[str]]]:
    """(rule, its log files) of each job Snakemake's log reports as failed, in order."""
    failed = []
    for match in FAILED_RULE.finditer(snakemake_log):
        logs = LOG_LINE.search(match.group(2))
        failed.append((match.group(1), logs.group(1).split(", ") if logs else []))
    return failed


def failure_summary(snakemake_log) -> str:
    """The lines a failed run ends with: each failed rule's own message (from its log file),
    read from Snakemake's log of the run (``snakemake_log``: the path, or the list of paths,
    ``onerror`` is given)."""
    paths = ([snakemake_log] if isinstance(snakemake_log, (str, Path))
             else list(snakemake_log or []))
    paths = [Path(p) for p in paths if Path(p).is_file()]
    path = paths[-1] if paths else None
    text = "".join(p.read_text(errors="replace") for p in paths)
    blocks, seen = [], set()
    for rule, logs in failed_rules(text):
        for log in logs or [None]:
            message = (last_message(Path(log).read_text(errors="replace"))
                       if log and Path(log).is_file() else "")
            lines = message.splitlines()
            if len(lines) > MESSAGE_LINES:
                lines = lines[:MESSAGE_LINES] + [f"  ... (the whole message: {log})"]
            if not lines or (rule, message) in seen:
                continue
            seen.add((rule, message))
            blocks.append(f"  rule {rule} ({log}):\n    " + "\n    ".join(lines))
    if not blocks:
        return ("polyjudge: the run stopped; Snakemake's messages above say why"
                + (f" (its log: {path})" if path else "") + ".")
    return ("polyjudge: the run stopped; the failed step(s) said:\n" + "\n".join(blocks))
