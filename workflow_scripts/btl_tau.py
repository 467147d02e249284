"""Judge-aware BTL fitted per language on out-of-bag items, scored with the held-out tau."""
import logging

from polyjudge.analyses import baselines, external, heldout
from polyjudge.data import io
from polyjudge.scripting import run_step, write_csv, write_parquet

log = logging.getLogger("polyjudge.btl")


def main(smk):
    settings = smk.params.settings
    panel = io.read_panel(smk.input.tensor)
    methods = {"Raw": baselines.METHODS["Raw"], "CBC": baselines.METHODS["CBC"],
               "Judge-aware BTL": external.btl_heldout_matrix}
    replicates = heldout.heldout_replicates(panel, methods, settings["replicates"],
                                            settings["seed"])
    table = heldout.summarise_tau(replicates)[["method", "mean", "spread_low", "spread_high",
                                               "n_replicates"]]
    log.info("\n%s", table.to_string(index=False))
    fit = external.judge_aware_btl(panel)
    matrix = panel.matrix_frame(fit.strengths, "strength")
    write_csv(table, smk.output.table)
    write_parquet(replicates, smk.output.replicates)
    write_csv(matrix, smk.output.matrix)


run_step(main, snakemake)
