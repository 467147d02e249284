"""Prediction-powered estimates from the panel's human labels (results/{panel}/labels/)."""
import logging

import pandas as pd

from polyjudge.analyses.labels import label_estimates, panel_predictions, sample_labels
from polyjudge.data.human_labels import average_annotators, read_human_labels
from polyjudge.scripting import run_step, write_csv

log = logging.getLogger("polyjudge.labels")


def main(smk):
    panel, spec, settings = smk.params.panel, smk.params.human_labels, smk.params.settings
    predictions, systems = panel_predictions(pd.read_parquet(smk.input.predictions))
    scale = spec["score_range"] or panel.get("score_range")
    labels = read_human_labels(spec["source"], items=predictions[["item", "language"]],
                               score_range=scale, columns=spec["columns"],
                               where=spec["where"] or None, language=spec["language"],
                               unknown_items=spec["unknown_items"], base_dir=smk.params.data_dir)
    if labels.attrs.get("dropped"):
        log.info("%d label(s) of items the panel lacks left out (unknown_items: drop)",
                 labels.attrs["dropped"])
    if "annotator" in labels:
        log.info("%d annotators; their labels of one item combined by their %s",
                 labels["annotator"].nunique(), spec["annotators"])
    if "probability" in labels and labels["probability"].nunique() > 1:
        log.warning("the labels record unequal probabilities of being chosen; these estimates "
                    "take the labelled items as a uniform sample and do not weight by them")
    combined = average_annotators(labels, spec["annotators"])
    used = combined
    if spec["sample"]:
        used = sample_labels(combined, systems, spec["sample"], spec["seed"])
        log.info("estimating from %d of the %d labels (%d per language x system, seed %d)",
                 len(used), len(combined), spec["sample"], spec["seed"])
    result = label_estimates(predictions, used, systems, kinds=settings["predictors"],
                             confidence=settings["confidence"], folds=settings["folds"],
                             seed=settings["seed"], label_range=scale,
                             all_labels=combined if spec["sample"] else None)
    table = result.estimates
    ppi = table[(table["estimator"] == "ppi") & table["se"].notna()]
    human = table[table["estimator"] == "human_only"].set_index(["language", "system"])
    if len(ppi) and len(human):
        ratio = (ppi["ci_high"] - ppi["ci_low"]).to_numpy() / (
            human["ci_high"] - human["ci_low"]).reindex(
            pd.MultiIndex.from_frame(ppi[["language", "system"]])).to_numpy()
        best = ppi.assign(ratio=ratio).groupby("predictor")["ratio"].median().sort_values()
        log.info("median interval width over the labels alone's, by predictor:\n%s",
                 best.round(3).to_string())
    write_csv(table, smk.output.estimates)
    write_csv(result.differences, smk.output.differences)
    write_csv(result.judge_errors, smk.output.errors)
    write_csv(result.ranks, smk.output.ranks)


run_step(main, snakemake)
