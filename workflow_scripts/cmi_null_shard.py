"""One shard of the CMI permutation null, with its own seed derived from (seed, shard)."""
import logging

from polyjudge import api
from polyjudge.data import io, shape
from polyjudge.scripting import run_step, write_parquet

log = logging.getLogger("polyjudge.cmi_null")


def main(smk):
    settings = smk.params.settings
    shard, convention = int(smk.wildcards.shard), smk.wildcards.convention
    panel = io.read_panel(smk.input.tensor)
    # ingest says so first; here when the runs were ingested before the panel listed the test
    shape.require_repeated_runs(panel.n_runs, smk.params.source, smk.wildcards.panel,
                                smk.config["panels"][smk.wildcards.panel]["analyses"])
    strata = api.cmi_strata(smk.input.runs, panel, smk.input.runs)  # read in batches
    null = api.cmi_null_shard(strata, convention, shard,
                              k=settings["k"], permutations=settings["permutations"],
                              shards=settings["shards"], seed=settings["seed"])
    log.info("shard %d (%s): %d permutations", shard, convention, len(null))
    write_parquet(null, smk.output.null)


run_step(main, snakemake)
