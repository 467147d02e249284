"""Running a workflow step: logging to the rule's log file and clean failure on bad input.

Rule scripts call :func:`run_step` with their ``main`` and the ``snakemake`` object; this module
does not import Snakemake. An :class:`~polyjudge.data.errors.InputError` (or a ValueError raised
on user input) becomes one readable message in the rule's log (on stderr when the rule has no
log) and a non-zero exit, so Snakemake stops the workflow and removes the step's partial
outputs; a bug, its traceback.
"""
from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

from .data import jsonfile
from .data.shape import SKIPPED

MESSAGES_VARIABLE = "POLYJUDGE_MESSAGES"
"""Set by :func:`run_step` in a rule script's process: :func:`polyjudge.data.errors.say` then words
messages for the workflow even inside the public functions (which word them for the API)."""

log = logging.getLogger("polyjudge")


def run_step(main, smk) -> None:
    """Configure logging to ``smk.log[0]`` (and stderr) and run ``main(smk)``.

    A failure's message goes to the rule's log only, when it has one: the run ends with each
    failed rule's message read from its log (the Snakefile's ``onerror``,
    :func:`polyjudge.report.summary.failure_summary`), so the console shows it once, last."""
    console = logging.StreamHandler(sys.stderr)
    handlers = [console]
    if len(smk.log):
        handlers.append(logging.FileHandler(smk.log[0], mode="w"))
        console.addFilter(lambda record: record.levelno < logging.ERROR)
    logging.basicConfig(level=logging.INFO, handlers=handlers, force=True,
                        format="%(asctime)s %(levelname)s [%(name)s] %(message)s")
    logging.captureWarnings(True)  # numerical warnings belong in the rule's log too
    log.info("rule %s, wildcards %s", smk.rule, dict(smk.wildcards))
    reason = skipped_reason(smk)
    if reason:  # the panel's shape does not allow this analysis: say so, in its own results
        log.warning("panel '%s': analysis '%s' skipped: %s", smk.wildcards.panel,
                    smk.params.analysis, reason)
        write_skipped(list(smk.output), smk.params.analysis, reason)
        log.info("done (skipped)")
        return
    where = f"rule {smk.rule}" + "".join(f", {k} {v}" for k, v in dict(smk.wildcards).items())
    os.environ[MESSAGES_VARIABLE] = "workflow"  # messages name the panel's config keys, file rows
    try:
        main(smk)
    except ValueError as error:  # bad input or settings: the message says what to change
        log.error("%s\n  (%s)", error, where)
        sys.exit(1)
    except Exception:  # a bug: its whole traceback, once, in the rule's log
        log.exception("unexpected error (%s)", where)
        sys.exit(1)
    log.info("done")


def skipped_reason(smk) -> str | None:
    """Why the job's analysis (its ``analysis`` param) cannot run on its panel: the reason the
    panel's ``shape.json`` (input ``shape``, written by ingest) gives; None: it runs."""
    if "shape" not in smk.input.keys() or "analysis" not in smk.params.keys():
        return None
    shape = json.loads(Path(smk.input.shape).read_text(encoding="utf-8"))
    return shape["analyses"].get(smk.params.analysis)


def write_skipped(outputs, analysis: str, reason: str) -> None:
    """Each of ``outputs`` as a skipped result: one row (JSON: one object) giving the analysis
    and why it did not run, in the file's own format, so every declared output exists, the
    run goes on, and readers (the figures, the results page) tell it from a result."""
    import pandas as pd

    record = dict(zip(SKIPPED, (analysis, reason)))
    for path in map(Path, outputs):
        if path.suffix == ".json":
            write_json(record, path)
        elif path.suffix == ".csv":
            write_csv(pd.DataFrame([record]), path)
        elif path.suffix == ".parquet":
            write_parquet(pd.DataFrame([record]), path)
        else:
            path.write_text(f"{analysis} skipped: {reason}\n", encoding="utf-8")


def write_json(data: dict, path, reasons: dict | None = None) -> None:
    """Write a small result as indented, strict JSON in insertion order (byte-stable across
    runs): a number that is not finite is written as null, with its reason (``reasons``: by
    key or path) under ``undefined`` (:mod:`polyjudge.data.jsonfile`)."""
    jsonfile.write_json(data, path, reasons)


def write_csv(frame, path) -> None:
    """Write a tidy table; floats as their shortest round-trip text, so reading gives back
    the exact values (CBC's tie artefacts depend on the last bit) and bytes are stable."""
    frame.to_csv(path, index=False)


def write_parquet(frame, path) -> None:
    frame.to_parquet(path, index=False)
