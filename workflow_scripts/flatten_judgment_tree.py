"""Flatten the upstream Agent-as-a-Judge JSON tree into a requirement table."""
import logging

from polyjudge.data.judgment_tree import flatten_judgment_tree
from polyjudge.scripting import run_step, write_parquet

log = logging.getLogger("polyjudge.flatten")


def main(smk):
    table = flatten_judgment_tree(smk.params.root)
    log.info("%d requirement verdicts from %d judgment files", len(table), len(smk.input))
    write_parquet(table, smk.output.requirements)


run_step(main, snakemake)
