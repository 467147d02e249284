"""The claims table: every published value beside the value this run reproduced."""
import logging
from pathlib import Path

from polyjudge.data.yamlfile import read_yaml
from polyjudge.report.claims import STATUSES, claims_markdown, evaluate_claims
from polyjudge.scripting import run_step, write_csv

log = logging.getLogger("polyjudge.report.claims")


def main(smk):
    claims = read_yaml(smk.input.claims)
    # the folder holding results/: "." here, the prefix when another workflow uses this one
    # as a Snakemake module (claims name outputs as results/...)
    root = Path(smk.output.table).parent.parent
    table = evaluate_claims(claims, root=root, data_dir=smk.params.data_dir,
                            produced={Path(path).relative_to(root).as_posix()
                                      for path in smk.input.claimed})
    counts = table["status"].value_counts()
    log.info("%d claims: %s", len(table),
             ", ".join(f"{counts.get(s, 0)} {s}" for s in STATUSES))
    for row in table[table["status"] == "differs"].itertuples():
        log.info("differs: %s (published %s, reproduced %s) %s", row.quantity, row.published,
                 row.reproduced, row.note)
    write_csv(table, smk.output.table)
    with open(smk.output.markdown, "w") as handle:
        handle.write(claims_markdown(table))


run_step(main, snakemake)
