"""Human-anchor agreement of raw vs CBC panel decisions, with and without a tie tolerance."""
import logging

from polyjudge.analyses import external
from polyjudge.data import io
from polyjudge.scripting import run_step, write_csv, write_json

log = logging.getLogger("polyjudge.human_anchor")


def main(smk):
    settings = smk.params.settings
    panel = io.read_panel(smk.input.tensor)
    beta = (io.read_table(smk.input.beta).pivot(index="language", columns="backbone",
                                                 values="beta")
            .loc[list(panel.languages), list(panel.backbones)].to_numpy())
    if "sample" in smk.input.keys():
        sample = external.load_anchor_sample(smk.input.sample)
        origin = f"published sample {smk.input.sample}"
    else:
        sample = external.stratified_anchor_sample(panel, settings["per_language"],
                                                   settings["per_stratum"], settings["seed"])
        origin = f"stratified sample, seed {settings['seed']}"
    common = dict(tolerance=settings["tolerance"], n_boot=settings["bootstrap"],
                  seed=settings["bootstrap_seed"])
    summary = {"sample": origin, **external.human_anchor_agreement(panel, beta, sample, **common)}
    whole = external.whole_panel_anchor(panel, beta, **common)
    log.info("agreement raw %.4f, CBC %.4f (tolerance %g); without tolerance %.4f -> %.4f",
             summary["agreement_raw"], summary["agreement_cbc"], settings["tolerance"],
             summary["agreement_raw_no_tolerance"], summary["agreement_cbc_no_tolerance"])
    write_json(summary, smk.output.summary)
    write_json(whole, smk.output.whole_panel)
    write_csv(sample, smk.output.sample)


run_step(main, snakemake)
