"""Backbone-subset ablation: CBC held-out tau for every subset of each size."""
import logging

from polyjudge.analyses.ablations import backbone_subset_ablation
from polyjudge.data import io
from polyjudge.scripting import run_step, write_csv

log = logging.getLogger("polyjudge.backbone_subsets")


def main(smk):
    panel = io.read_panel(smk.input.tensor)
    settings = smk.params.settings
    table = backbone_subset_ablation(panel, settings["sizes"], settings["replicates"],
                                     settings["seed_base"])
    log.info("\n%s", table[table["level"] == "size"].to_string(index=False))
    write_csv(table, smk.output.table)


run_step(main, snakemake)
