"""ANOVA with replication: is the task x language x backbone interaction negligible?"""
import logging

from polyjudge.analyses.diagnostics import replicate_array, three_way_anova
from polyjudge.data import shape
from polyjudge.scripting import run_step, write_json

log = logging.getLogger("polyjudge.three_way")
ANOVA_BLANKS = {"f": "no F test: the residual and total rows are not tested",
                "p": "no F test: the residual and total rows are not tested",
                "ms": "no mean square: the total row is the sum of the others"}


def main(smk):
    panel = smk.params.panel
    array = replicate_array(smk.input.runs, panel.get("languages"), panel.get("backbones"),
                            smk.input.runs)  # read in batches into the array
    # ingest says so first; here when the runs were ingested before the panel listed the test
    # (the array is balanced: one framework is one run per cell)
    shape.require_repeated_runs([len(array.frameworks)], smk.params.source, smk.wildcards.panel,
                                smk.config["panels"][smk.wildcards.panel]["analyses"])
    result = three_way_anova(array.values, smk.params.alpha)
    log.info("\n%s", result.table.to_string(index=False))
    write_json(result.to_dict(), smk.output.summary, reasons=ANOVA_BLANKS)


run_step(main, snakemake)
