"""Task-count ablation: held-out tau and beta error against the number of tasks."""
import logging

from polyjudge.analyses.ablations import panel_task_counts, task_count_ablation
from polyjudge.data import io
from polyjudge.scripting import run_step, write_csv

log = logging.getLogger("polyjudge.task_count")


def main(smk):
    panel = io.read_panel(smk.input.tensor)
    settings = smk.params.settings
    n_values, note = panel_task_counts(settings["n_values"], len(panel.tasks))
    if note:  # which values the panel is too small for, and the setting that fits it
        log.warning(note)
    beta_true = None
    if "beta_true" in smk.input.keys():
        truth = io.read_table(smk.input.beta_true)
        beta_true = truth.pivot(index="language", columns="backbone", values="beta_true")
    table = task_count_ablation(panel, n_values, settings["replicates"], settings["seed"],
                                beta_true=beta_true, eps=smk.params.eps)
    log.info("\n%s", table.to_string(index=False))
    write_csv(table, smk.output.table)


run_step(main, snakemake)
