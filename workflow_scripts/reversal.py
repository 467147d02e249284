"""Rank reversal per backbone pair, top backbone per language, global reversal-count test."""
import logging

import polyjudge
from polyjudge.data import io
from polyjudge.scripting import run_step, write_csv, write_json

log = logging.getLogger("polyjudge.analyses.reversal")


def main(smk):
    settings = smk.params.settings
    # the ingested tensor is a run table with one run per cell; ingest has applied the panel's
    # missing policy already, so empty cells are simply left out here
    tensor = io.read_table(smk.input.tensor)
    panel = io.read_panel(smk.input.tensor)
    result = polyjudge.reversal(tensor, fdr=settings["fdr"], permutations=settings["permutations"],
                               seed=settings["seed"], languages=panel.languages,
                               backbones=panel.backbones, missing="omit",
                               source=smk.input.tensor)
    summary = result.summary
    log.info("%d of %d pairs reverse, %d significant; global test p = %.4g",
             summary["n_reversed"], summary["n_pairs"], summary["n_significant"],
             summary["global_test"]["p_value"])
    write_csv(result.pairs, smk.output.pairs)
    write_json(summary, smk.output.summary)


run_step(main, snakemake)
