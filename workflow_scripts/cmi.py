"""Merge the null shards and test the observed CMI, under both tie conventions (labelled)."""
import logging

import pandas as pd

from polyjudge import api
from polyjudge.data import io
from polyjudge.scripting import run_step, write_csv, write_json, write_parquet

log = logging.getLogger("polyjudge.cmi")


def main(smk):
    settings = smk.params.settings
    panel = io.read_panel(smk.input.tensor)  # the ingested tensor fixes the axis order
    null = pd.concat([io.read_table(path) for path in smk.input.shards], ignore_index=True)
    strata = api.cmi_strata(smk.input.runs, panel, smk.input.runs)  # validated by ingest
    result = api.cmi_test_strata(strata, k=settings["k"], permutations=settings["permutations"],
                                 shards=settings["shards"], seed=settings["seed"],
                                 conventions=settings["conventions"], null=null)
    for convention in settings["conventions"]:
        test = result.summary[convention]
        log.info("%s: observed %.4f, debiased %.4f [%.4f, %.4f], p = %.4g", convention,
                 test["observed"], test["debiased"], test["band_low"], test["band_high"],
                 test["p_value"])
    write_json(result.summary, smk.output.summary)
    write_parquet(result.null, smk.output.null)
    write_csv(result.strata, smk.output.strata)


run_step(main, snakemake)
