"""Requirement-type decomposition: Raw vs CBC held-out tau on requirement groups."""
import logging

from polyjudge.analyses.ablations import requirement_type_ablation
from polyjudge.data import io
from polyjudge.scripting import run_step, write_csv

log = logging.getLogger("polyjudge.requirement_type")


def main(smk):
    settings = smk.params.settings
    panel = smk.params.panel
    requirements = io.read_table(smk.input.requirements)
    types = io.read_table(smk.input.types, ["task", "requirement_id", "requirement_type"])
    table = requirement_type_ablation(requirements, types, groups=settings["groups"],
                                      languages=panel.get("languages"),
                                      backbones=panel.get("backbones"),
                                      n_replicates=settings["replicates"], seed=settings["seed"])
    log.info("\n%s", table.to_string(index=False))
    write_csv(table, smk.output.table)


run_step(main, snakemake)
