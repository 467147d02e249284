"""Coverage of the leaderboard's rank intervals on the simulation study's panels."""
import logging

import pandas as pd

from polyjudge.analyses.simulation import simulate_rank_coverage
from polyjudge.scripting import run_step, write_csv

log = logging.getLogger("polyjudge.analyses.simulation")


def main(smk):
    rows = []
    for name, settings in smk.params.scenarios.items():
        settings = dict(settings)
        n_panels, seed = settings.pop("n_panels"), settings.pop("seed")
        rows += simulate_rank_coverage(name, settings, n_panels, seed, smk.params.replicates,
                                       smk.params.level)
    table = pd.DataFrame(rows)
    log.info("\n%s", table.to_string(index=False))
    write_csv(table, smk.output.table)


run_step(main, snakemake)
