"""Merge the null shards and test the observed CMI, under both tie conventions (labelled)."""
import logging

import pandas as pd

import judgecal
from judgecal.data import io
from judgecal.scripting import run_step, write_csv, write_json, write_parquet

log = logging.getLogger("judgecal.cmi")


def main(smk):
    settings = smk.params.settings
    panel = io.read_panel(smk.input.tensor)  # the ingested tensor fixes the axis order
    null = pd.concat([io.read_table(path) for path in smk.input.shards], ignore_index=True)
    result = judgecal.cmi_test(io.read_table(smk.input.runs), k=settings["k"],
                               permutations=settings["permutations"], shards=settings["shards"],
                               seed=settings["seed"], conventions=settings["conventions"],
                               null=null, languages=panel.languages, backbones=panel.backbones,
                               missing="omit", source=smk.input.runs)  # ingest applied it
    for convention in settings["conventions"]:
        test = result.summary[convention]
        log.info("%s: observed %.4f, debiased %.4f [%.4f, %.4f], p = %.4g", convention,
                 test["observed"], test["debiased"], test["band_low"], test["band_high"],
                 test["p_value"])
    write_json(result.summary, smk.output.summary)
    write_parquet(result.null, smk.output.null)
    write_csv(result.strata, smk.output.strata)


run_step(main, snakemake)
