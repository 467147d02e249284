"""Running a workflow step: logging to the rule's log file and clean failure on bad input.

Rule scripts call :func:`run_step` with their ``main`` and the ``snakemake`` object; this module
does not import Snakemake. An :class:`~polyjudge.data.errors.InputError` (or a ValueError raised
on user input) becomes one readable message in the log and on stderr, and a non-zero exit, so
Snakemake stops the workflow and removes the step's partial outputs.
"""
from __future__ import annotations

import logging
import os
import sys

from .data import jsonfile

MESSAGES_VARIABLE = "POLYJUDGE_MESSAGES"
"""Set by :func:`run_step` in a rule script's process: :func:`polyjudge.data.errors.say` then words
messages for the workflow even inside the public functions (which word them for the API)."""

log = logging.getLogger("polyjudge")


def run_step(main, smk) -> None:
    """Configure logging to ``smk.log[0]`` and run ``main(smk)``."""
    handlers = [logging.StreamHandler(sys.stderr)]
    if len(smk.log):
        handlers.append(logging.FileHandler(smk.log[0], mode="w"))
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
    except Exception:  # a bug: keep the whole traceback in the rule's log too
        log.exception("unexpected error (%s)", where)
        raise
    log.info("done")


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
