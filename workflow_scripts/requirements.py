"""Validate a panel's requirement-level verdicts (results/{panel}/requirements.parquet)."""
import logging

from judgecal.data import io
from judgecal.scripting import run_step, write_parquet

log = logging.getLogger("judgecal.requirements")


def main(smk):
    path = smk.input.requirements
    table = io.read_table(path, mapping=smk.params.panel.get("columns"))
    io.runs_from_requirements(table, path)  # validates keys, duplicates and 0/1 verdicts
    keep = io.REQUIREMENT_COLUMNS + [c for c in ["response_status"] if c in table.columns]
    log.info("%d requirement verdicts", len(table))
    write_parquet(table[keep], smk.output.requirements)


run_step(main, snakemake)
