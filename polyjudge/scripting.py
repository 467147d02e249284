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

import numpy as np

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


def _plain(value):
    """JSON encoder for numpy scalars and arrays."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def write_json(data: dict, path) -> None:
    """Write a small result as indented JSON in insertion order (byte-stable across runs)."""
    Path(path).write_text(json.dumps(data, indent=2, sort_keys=False, default=_plain) + "\n")


def write_csv(frame, path) -> None:
    """Write a tidy table; floats as their shortest round-trip text, so reading gives back
    the exact values (CBC's tie artefacts depend on the last bit) and bytes are stable."""
    frame.to_csv(path, index=False)


def write_parquet(frame, path) -> None:
    frame.to_parquet(path, index=False)
