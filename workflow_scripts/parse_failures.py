"""beta and rankings with empty judge responses stored as unsatisfied vs treated as missing."""
import logging

from polyjudge.analyses.missing import parse_failure_effect
from polyjudge.data import io
from polyjudge.scripting import run_step, write_csv

log = logging.getLogger("polyjudge.parse_failures")


def main(smk):
    panel = smk.params.panel
    requirements = io.read_table(smk.input.requirements)
    table = parse_failure_effect(requirements, panel.get("languages"), panel.get("backbones"),
                                 source=smk.input.requirements)
    worst = table.reindex(table["difference"].abs().sort_values(ascending=False).index).head(5)
    log.info("largest changes of beta:\n%s", worst.to_string(index=False))
    write_csv(table, smk.output.table)


run_step(main, snakemake)
