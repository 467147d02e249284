"""Whether each judge's missing cells depend on the item's score as the other judges give it
(a panel with `missing: omit`); flagged judges are named in the log as a warning."""
import logging

from polyjudge.analyses.missingness import flagged_judges, informative_missing_check
from polyjudge.data import io
from polyjudge.scripting import run_step, write_csv

log = logging.getLogger("polyjudge.missing")


def main(smk):
    panel = io.read_panel(smk.input.tensor)
    table = informative_missing_check(panel.values, panel.languages, panel.backbones,
                                      smk.params.alpha, smk.params.permutations, smk.params.seed)
    judges = table[table["language"] == "all"]
    log.info("missing cells per judge and the check (Holm over the judges at %s):\n%s",
             smk.params.alpha, judges.to_string(index=False))
    flagged = flagged_judges(table)
    if flagged:
        log.warning("%s: the missing cells of %s depend on the item's score as the other judges "
                    "give it (missing/mnar_check.csv): every estimate that leaves them out "
                    "assumes they are missing at random, and is biased here (docs/methods.md "
                    "10.9)", smk.wildcards.panel, ", ".join(map(str, flagged)))
    write_csv(table, smk.output.table)


run_step(main, snakemake)
