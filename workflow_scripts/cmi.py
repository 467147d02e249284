"""Merge the null shards and test the observed CMI, under both tie conventions (labelled)."""
import dataclasses
import logging

import pandas as pd

from judgecal import information, io
from judgecal.scripting import run_step, write_csv, write_json, write_parquet

log = logging.getLogger("judgecal.cmi")

CONVENTIONS = {
    "protocol": "neighbours within the k-th-neighbour radius counted inclusively, the point "
                "itself excluded, floored at 1 (the published protocol)",
    "sklearn": "scikit-learn's _compute_mi_cd: points strictly inside the radius, the point "
               "itself included",
}


def main(smk):
    settings = smk.params.settings
    panel = io.read_panel(smk.input.tensor)
    strata = information.cmi_strata(io.read_table(smk.input.runs), panel.tasks,
                                    panel.languages, panel.backbones)
    null = pd.concat([io.read_table(path) for path in smk.input.shards], ignore_index=True)
    null = null.sort_values(["convention", "shard", "draw"], kind="stable", ignore_index=True)
    per_stratum = strata.strata_frame()
    summary = {"statistic": "mean over (task, backbone) strata of the Ross (2014) estimate of "
                            "I(score; language), nats",
               "k": settings["k"], "n_permutations": settings["permutations"],
               "n_shards": settings["shards"], "seed": settings["seed"],
               "n_strata": len(strata.scores), "points_per_stratum": strata.scores.shape[1]}
    for convention in settings["conventions"]:
        observed = information.ross_mi(strata.scores, strata.labels, settings["k"], convention)
        draws = null.loc[null["convention"] == convention, "statistic"].to_numpy()
        test = information.cmi_test(observed, draws)
        summary[convention] = {"convention": CONVENTIONS[convention], **dataclasses.asdict(test)}
        per_stratum[convention] = observed
        log.info("%s: observed %.4f, debiased %.4f [%.4f, %.4f], p = %.4g", convention,
                 test.observed, test.debiased, test.band_low, test.band_high, test.p_value)
    write_json(summary, smk.output.summary)
    write_parquet(null, smk.output.null)
    write_csv(per_stratum, smk.output.strata)


run_step(main, snakemake)
