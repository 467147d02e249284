"""Decision-level agreement of Raw and CBC picks with the held-out additive-model oracle."""
import logging

from polyjudge.analyses import heldout
from polyjudge.data import io
from polyjudge.scripting import run_step, write_json

log = logging.getLogger("polyjudge.decisions")


def main(smk):
    settings = smk.params.settings
    panel = io.read_panel(smk.input.tensor)
    result = heldout.decision_agreement(panel, settings["replicates"], settings["seed"])
    for name, summary in result["methods"].items():
        overall = summary["overall"]
        log.info("%s: accuracy %.4f [%.4f, %.4f], regret %.3f", name, overall["accuracy"],
                 overall["ci_low"], overall["ci_high"], overall["regret_mean"])
    write_json(result, smk.output.decisions)


run_step(main, snakemake)
