"""CBC on one panel: beta, CBC-Weighted beta, rankings, calibrated tensor, the summary and the
leaderboard (mean and rank intervals by task bootstrap, settings `rank_intervals`)."""
import json
import logging

import polyjudge
from polyjudge.analyses.leaderboard import leaderboard
from polyjudge.cbc.summary import outside_score_range
from polyjudge.data import io
from polyjudge.scripting import run_step, write_csv, write_json, write_parquet

log = logging.getLogger("polyjudge.cbc")


def main(smk):
    panel = io.read_panel(smk.input.tensor)
    manifest = json.loads(open(smk.input.manifest).read())  # run count and R^2 from ingest
    settings = smk.params.panel
    result = polyjudge.api.calibrate_panel(
        panel, n_runs=manifest["n_runs"], r2=(manifest["r2_two_way"], manifest["r2_full"]),
        estimator=settings["estimator"], eps=smk.params.eps,
        source=f"panel '{smk.wildcards.panel}' ({smk.input.tensor})")
    log.info("%s", result.summary["estimator_note"])
    write_csv(result.beta, smk.output.beta)
    write_csv(result.beta_weighted, smk.output.beta_weighted)
    write_csv(result.rankings, smk.output.rankings)
    write_parquet(result.calibrated, smk.output.calibrated)
    summary = {**result.summary,
               "calibrated_outside_range": outside_score_range(
                   result.calibrated["score"].to_numpy(), settings["score_range"]),
               "seed": settings.get("seed"),  # a synthetic panel's generator seed
               "inputs": manifest["files"]}
    if "beta_true" in smk.input.keys():
        truth = io.read_table(smk.input.beta_true)
        merged = result.beta.merge(truth, on=["language", "backbone"])
        error = (merged["beta"] - merged["beta_true"]).abs()
        summary["beta_error_vs_truth"] = {"mean_abs": float(error.mean()),
                                          "max_abs": float(error.max())}
        log.info("error against the planted beta: mean %.3f, max %.3f", error.mean(), error.max())
    outside = summary["calibrated_outside_range"]
    if outside and outside["n_outside"]:
        log.info("%d of %d calibrated scores lie outside the score range %s (%d below, %d "
                 "above): kept, not clipped", outside["n_outside"], outside["n_scores"],
                 settings["score_range"], outside["n_below"], outside["n_above"])
    log.info("max |beta| %.3f, radius %.3f (total SD), R^2 %.4f / %.4f",
             summary["max_abs_beta"], summary["radius_total"], summary["r2_two_way"],
             summary["r2_full"])
    write_json(summary, smk.output.summary)
    intervals = smk.params.intervals
    write_csv(leaderboard(panel, settings["estimator"], intervals["replicates"],
                          intervals["level"], intervals["seed"]), smk.output.leaderboard)
    log.info("leaderboard: %d replicates, level %g", intervals["replicates"], intervals["level"])


run_step(main, snakemake)
