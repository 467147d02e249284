"""Delete a share of the cells at random; error of each incomplete-panel estimator's beta."""
import logging

from polyjudge.analyses.missing import deletion_experiment
from polyjudge.data import io
from polyjudge.scripting import run_step, write_csv

log = logging.getLogger("polyjudge.deletion")


def main(smk):
    panel = io.read_panel(smk.input.tensor)
    settings = smk.params.settings
    table = deletion_experiment(panel.values, settings["rates"], settings["replicates"],
                                settings["seed"], settings["methods"])
    log.info("\n%s", table.to_string(index=False))
    write_csv(table, smk.output.table)


run_step(main, snakemake)
