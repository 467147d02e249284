"""A panel that extends another: the new judges' raw and CBC ranks per language with task-
bootstrap intervals, and how far the base judges' beta moved when they were added."""
import logging

from polyjudge.analyses import extension
from polyjudge.data import io
from polyjudge.scripting import run_step, write_csv, write_json

log = logging.getLogger("polyjudge.extension")

def main(smk):
    panel = io.read_panel(smk.input.tensor)
    beta, base_beta = io.read_table(smk.input.beta), io.read_table(smk.input.base_beta)
    new = [b for b in panel.backbones if b not in set(base_beta["backbone"].astype(str))]
    settings = smk.params.intervals
    ranks = extension.rank_intervals(panel, new, settings["replicates"], settings["level"],
                                     settings["seed"])
    shift, summary = extension.beta_shift(base_beta, beta)
    added = ranks[ranks["new"]]
    new_beta = beta[beta["backbone"].astype(str).isin(new)]
    summary = {"base": smk.params.base, "new_backbones": new,
               "n_backbones_base": int(base_beta["backbone"].nunique()), **summary,
               "max_abs_beta_new": float(new_beta["beta"].abs().max()),
               "rank_cbc": {b: int(r) for b, r in
                            added.groupby("backbone", sort=False)["rank_cbc"].first().items()},
               "rank_raw_range": {b: [int(g["rank_raw"].min()), int(g["rank_raw"].max())]
                                  for b, g in added.groupby("backbone", sort=False)},
               "rank_intervals": dict(settings)}
    log.info("added %s to '%s': CBC rank %s, raw ranks %s; max |beta shift| of the base judges "
             "%.3f (%s)", new, smk.params.base, summary["rank_cbc"], summary["rank_raw_range"],
             summary["max_abs_shift"], summary["max_abs_shift_cell"])
    write_csv(added.drop(columns="new").reset_index(drop=True), smk.output.ranks)
    write_csv(shift, smk.output.shift)
    write_json(summary, smk.output.summary)

run_step(main, snakemake)
