"""Rank reversal per backbone pair, top backbone per language, global reversal-count test."""
import logging

from judgecal import io, reversal
from judgecal.scripting import run_step, write_csv, write_json

log = logging.getLogger("judgecal.reversal")


def main(smk):
    settings = smk.params.settings
    panel = io.read_panel(smk.input.tensor)
    pairs = reversal.rank_reversal(panel, settings["fdr"])
    top = reversal.top_backbone_per_language(panel)
    test = reversal.reversal_count_test(panel, settings["permutations"], settings["seed"])
    summary = reversal.reversal_summary(pairs, top, test, settings["fdr"])
    summary["seed"] = settings["seed"]
    log.info("%d of %d pairs reverse, %d significant; global test p = %.4g",
             summary["n_reversed"], summary["n_pairs"], summary["n_significant"],
             summary["global_test"]["p_value"])
    write_csv(pairs, smk.output.pairs)
    write_json(summary, smk.output.summary)


run_step(main, snakemake)
