"""CBC on one panel: beta, CBC-Weighted beta, rankings, calibrated tensor and the summary."""
import json
import logging

import numpy as np

from judgecal import estimator, io
from judgecal.missing import estimate_beta
from judgecal.panel import Panel
from judgecal.scripting import run_step, write_csv, write_json, write_parquet

log = logging.getLogger("judgecal.cbc")


def main(smk):
    panel = io.read_panel(smk.input.tensor)
    manifest = json.loads(open(smk.input.manifest).read())  # run counts and R^2 from ingest
    estimate = estimate_beta(panel.values, smk.params.panel["estimator"])
    log.info("%s", estimate.note)
    result = estimator.cbc_result(estimate.cell_means, estimate.beta)
    write_csv(panel.matrix_frame(result.beta, "beta"), smk.output.beta)
    write_csv(panel.matrix_frame(result.beta_weighted, "beta"), smk.output.beta_weighted)
    write_csv(estimator.rankings_frame(panel, result), smk.output.rankings)
    calibrated = Panel(estimator.cbc_calibrate(panel.values, result.beta), panel.tasks,
                       panel.languages, panel.backbones, panel.strata, panel.n_runs)
    write_parquet(calibrated.to_frame(), smk.output.calibrated)

    n, k, m = panel.shape
    eps = smk.params.eps
    sigma_total = float(np.nanstd(panel.values))
    sigma_residual = estimator.residual_sd(panel.values)
    order = np.argsort(result.rank_cbc[0])
    summary = {
        "n_tasks": n, "n_languages": k, "n_backbones": m, "n_runs": manifest["n_runs"],
        "complete": panel.is_complete,
        "estimator": estimate.method,
        "estimator_note": estimate.note,
        "sigma_total": sigma_total,
        "sigma_residual": sigma_residual,
        "radius_total": estimator.finite_sample_radius(sigma_total, n, k, m, eps),
        "radius_residual": estimator.finite_sample_radius(sigma_residual, n, k, m, eps),
        "eps": eps,
        "sigma_definitions": {
            "sigma_total": "population SD (ddof 0) of all task-level scores (the paper's protocol)",
            "sigma_residual": "population SD of the residuals of task + language + backbone + "
                              "language x backbone fitted to the task-level scores",
        },
        "max_abs_beta": float(np.abs(result.beta).max()),
        "tasks_for_radius_below_half_max_beta": estimator.tasks_for_radius(
            sigma_total, float(np.abs(result.beta).max()) / 2, k, m, eps),
        "r2_two_way": manifest["r2_two_way"],
        "r2_full": manifest["r2_full"],
        "r2_models": {
            "r2_two_way": "run score ~ task + backbone + language + framework + backbone:language",
            "r2_full": "the two-way model + task:language",
        },
        "same_order_after_cbc": bool((result.rank_cbc == result.rank_cbc[0]).all()),
        "order_after_cbc": [panel.backbones[i] for i in order],
        "seed": smk.params.panel.get("seed"),  # a synthetic panel's generator seed
        "inputs": manifest["files"],
    }
    if "beta_true" in smk.input.keys():
        truth = io.read_table(smk.input.beta_true)
        merged = panel.matrix_frame(result.beta, "beta").merge(truth, on=["language", "backbone"])
        error = (merged["beta"] - merged["beta_true"]).abs()
        summary["beta_error_vs_truth"] = {"mean_abs": float(error.mean()),
                                          "max_abs": float(error.max())}
        log.info("error against the planted beta: mean %.3f, max %.3f", error.mean(), error.max())
    log.info("max |beta| %.3f, radius %.3f (total SD), R^2 %.4f / %.4f",
             summary["max_abs_beta"], summary["radius_total"], summary["r2_two_way"],
             summary["r2_full"])
    write_json(summary, smk.output.summary)


run_step(main, snakemake)
