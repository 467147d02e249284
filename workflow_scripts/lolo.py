"""Leave-one-language-out: zero-shot calibration of a language the calibrator never saw."""
import logging

from polyjudge.analyses.ablations import lolo
from polyjudge.data import io
from polyjudge.scripting import run_step, write_csv

log = logging.getLogger("polyjudge.lolo")


def main(smk):
    panel = io.read_panel(smk.input.tensor)
    table = lolo(panel, smk.params.settings["replicates"], smk.params.settings["seed"])
    log.info("\n%s", table.to_string(index=False))
    write_csv(table, smk.output.table)


run_step(main, snakemake)
