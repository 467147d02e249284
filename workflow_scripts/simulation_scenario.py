"""One scenario of the simulation study: bias, RMSE, coverage and rank recovery of CBC."""
import logging

import pandas as pd

from polyjudge.analyses.simulation import simulate_scenario
from polyjudge.scripting import run_step, write_csv

log = logging.getLogger("polyjudge.analyses.simulation")


def main(smk):
    settings = dict(smk.params.settings)
    study = smk.params.study
    n_panels, seed = settings.pop("n_panels"), settings.pop("seed")
    row = simulate_scenario(smk.wildcards.scenario, settings, n_panels, seed,
                            study["band_replicates"], study["level"], study["alpha"])
    log.info("%s", row)
    write_csv(pd.DataFrame([row]), smk.output.table)


run_step(main, snakemake)
