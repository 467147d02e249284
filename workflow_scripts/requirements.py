"""Validate a panel's requirement-level verdicts (results/{panel}/requirements.parquet)."""
import logging

from polyjudge.data import io, sources
from polyjudge.scripting import run_step, write_parquet

log = logging.getLogger("polyjudge.requirements")


def main(smk):
    panel, files = smk.params.panel, smk.input.requirements
    value = panel["requirements"] if panel["kind"] == "judge_runs" else files
    table = sources.read_source(value, files, panel.get("columns"),
                                fields=sources.REQUIREMENT_FIELDS, base_dir=smk.params.data_dir)
    source = files if isinstance(files, str) else sources.describe(value)
    # validates keys, duplicates and 0/1 verdicts, naming the user's columns
    io.runs_from_requirements(table, source, panel.get("columns") or {})
    keep = io.REQUIREMENT_COLUMNS + [c for c in ["response_status"] if c in table.columns]
    log.info("%d requirement verdicts", len(table))
    write_parquet(table[keep], smk.output.requirements)


run_step(main, snakemake)
