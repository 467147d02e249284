"""Held-out tau of every method over task bootstraps, full-fit tau and paired comparisons."""
import logging

from polyjudge.analyses.heldout import heldout_tables
from polyjudge.analyses.binary_verdicts import requirement_items, streamed_run_items
from polyjudge.data import io, shape
from polyjudge.scripting import run_step, write_csv, write_parquet

log = logging.getLogger("polyjudge.analyses.heldout")


def main(smk):
    settings = smk.params.settings
    panel = io.read_panel(smk.input.tensor)  # the ingested (validated) tensor: the panel
    shape.require_two_way(panel, smk.input.tensor, "held-out rank consistency")
    # Dawid-Skene's run verdicts where the panel has a run table (its scores are pass rates),
    # read in batches (only codes and verdicts are kept: bounded at 10^7 runs); none for
    # preference margins
    runs = (streamed_run_items(smk.input.runs, panel, smk.params.verdict_threshold,
                               score_range=smk.params.score_range)
            if "runs" in smk.input.keys() else None)
    requirements = (requirement_items(io.with_single_framework(
        io.read_table(smk.input.requirements)), panel)
        if "requirements" in smk.input.keys() else None)
    if smk.params.left_out:  # of `heldout.methods`: said once, not run, no row in tau.csv
        log.info("not run on this panel, which has no requirement table (requirement-level "
                 "verdicts): %s", ", ".join(smk.params.left_out))
    # a method that cannot run is logged once, with its reason (also in tau.csv's reason column)
    tau, replicates, paired, _ = heldout_tables(
        panel, smk.params.methods, settings["replicates"], settings["seed"],
        settings["reference"], runs=runs, requirements=requirements)
    log.info("\n%s", tau.to_string(index=False))
    write_csv(tau, smk.output.tau)
    write_parquet(replicates, smk.output.replicates)
    write_csv(paired, smk.output.paired)


run_step(main, snakemake)
