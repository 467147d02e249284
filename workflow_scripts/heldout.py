"""Held-out tau of every method over task bootstraps, full-fit tau and paired comparisons."""
import logging

from judgecal import heldout, io
from judgecal.scripting import run_step, write_csv, write_parquet

log = logging.getLogger("judgecal.heldout")


def main(smk):
    settings = smk.params.settings
    panel = io.read_panel(smk.input.tensor)
    data = {name: io.read_table(smk.input[name])
            for name in ("runs", "requirements") if name in smk.input.keys()}
    methods = list(smk.params.methods)
    replicates = heldout.heldout_replicates(panel, methods, settings["replicates"],
                                            settings["seed"], **data)
    full_fit = heldout.full_fit_tau(panel, methods, settings["seed"], **data)
    table = heldout.summarise_tau(replicates, full_fit)
    skipped = sorted(set(methods) - set(table["method"]))
    if skipped:
        log.warning("methods skipped (the panel lacks the data they need): %s", skipped)
    log.info("\n%s", table.to_string(index=False))
    write_csv(table, smk.output.tau)
    write_parquet(replicates, smk.output.replicates)
    write_csv(heldout.paired_comparison(replicates, settings["reference"]), smk.output.paired)


run_step(main, snakemake)
