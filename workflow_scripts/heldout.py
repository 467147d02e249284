"""Held-out tau of every method over task bootstraps, full-fit tau and paired comparisons."""
import logging

import judgecal
from judgecal.data import io
from judgecal.scripting import run_step, write_csv, write_parquet

log = logging.getLogger("judgecal.analyses.heldout")


def main(smk):
    settings = smk.params.settings
    panel = io.read_panel(smk.input.tensor)  # the ingested tensor fixes the axis order
    # the run table where the panel has one (its scores are Dawid-Skene's run verdicts), else
    # the tensor, itself a run table with one run per cell (preference margins)
    with_runs = "runs" in smk.input.keys()
    runs = io.read_table(smk.input.runs if with_runs else smk.input.tensor)
    requirements = (io.read_table(smk.input.requirements)
                    if "requirements" in smk.input.keys() else None)
    result = judgecal.heldout(runs, methods=smk.params.methods,
                              replicates=settings["replicates"], seed=settings["seed"],
                              reference=settings["reference"], requirements=requirements,
                              run_verdicts=with_runs,
                              verdict_threshold=smk.params.verdict_threshold,
                              languages=panel.languages,
                              backbones=panel.backbones, missing="omit",  # ingest applied it
                              source=smk.input.runs if with_runs else smk.input.tensor)
    if result.skipped:  # each with its reason (logged, and in tau.csv's reason column)
        log.warning("methods skipped (the panel lacks the data they need): %s",
                    sorted(result.skipped))
    log.info("\n%s", result.tau.to_string(index=False))
    write_csv(result.tau, smk.output.tau)
    write_parquet(result.replicates, smk.output.replicates)
    write_csv(result.paired, smk.output.paired)


run_step(main, snakemake)
