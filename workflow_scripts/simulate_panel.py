"""Generate a synthetic additive-model panel and write its ground truth next to its runs."""
import logging

import pandas as pd

from polyjudge.analyses.synthetic import SIMULATION_SETTINGS, simulate_panel
from polyjudge.data.io import REQUIREMENT_COLUMNS
from polyjudge.scripting import run_step, write_csv, write_json, write_parquet

log = logging.getLogger("polyjudge.simulate")


def main(smk):
    settings = {key: smk.params.panel[key] for key in SIMULATION_SETTINGS}
    synthetic = simulate_panel(**settings)
    log.info("simulated %d runs with settings %s", len(synthetic.runs), settings)
    write_parquet(synthetic.runs, smk.output.runs)
    requirements = synthetic.requirements
    if requirements is None:  # the rule's output exists either way; empty without verdicts
        requirements = pd.DataFrame(columns=REQUIREMENT_COLUMNS)
    write_parquet(requirements, smk.output.requirements)
    write_json(synthetic.truth_summary(), smk.output.truth)
    write_csv(synthetic.beta_frame(), smk.output.beta_true)


run_step(main, snakemake)
