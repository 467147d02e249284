"""Merge the simulation scenarios into results/simulation/summary.csv."""
import logging

import pandas as pd

from polyjudge.scripting import run_step, write_csv

log = logging.getLogger("polyjudge.analyses.simulation")


def main(smk):
    table = pd.concat([pd.read_csv(path) for path in smk.input], ignore_index=True)
    log.info("\n%s", table.to_string(index=False))
    write_csv(table, smk.output.table)


run_step(main, snakemake)
