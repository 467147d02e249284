"""ANOVA with replication: is the task x language x backbone interaction negligible?"""
import logging

from polyjudge.analyses.diagnostics import replicate_array, three_way_anova
from polyjudge.scripting import run_step, write_json

log = logging.getLogger("polyjudge.three_way")


def main(smk):
    panel = smk.params.panel
    array = replicate_array(smk.input.runs, panel.get("languages"), panel.get("backbones"),
                            smk.input.runs)  # read in batches into the array
    result = three_way_anova(array.values, smk.params.alpha)
    log.info("\n%s", result.table.to_string(index=False))
    write_json(result.to_dict(), smk.output.summary)


run_step(main, snakemake)
