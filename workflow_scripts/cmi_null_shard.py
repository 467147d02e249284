"""One shard of the CMI permutation null, with its own seed derived from (seed, shard)."""
import logging

import pandas as pd

from judgecal import information, io
from judgecal.scripting import run_step, write_parquet

log = logging.getLogger("judgecal.cmi_null")


def main(smk):
    settings = smk.params.settings
    shard, convention = int(smk.wildcards.shard), smk.wildcards.convention
    panel = io.read_panel(smk.input.tensor)
    strata = information.cmi_strata(io.read_table(smk.input.runs), panel.tasks,
                                    panel.languages, panel.backbones)
    size = information.shard_sizes(settings["permutations"], settings["shards"])[shard]
    seed = information.shard_seeds(settings["seed"], settings["shards"])[shard]
    null = information.cmi_null(strata.scores, strata.labels, settings["k"], convention, size,
                                seed)
    log.info("shard %d (%s): %d permutations, %d strata", shard, convention, size,
             len(strata.scores))
    write_parquet(pd.DataFrame({"convention": convention, "shard": shard,
                                "draw": range(size), "statistic": null}), smk.output.null)


run_step(main, snakemake)
