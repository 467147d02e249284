"""The label plan: intervals so far and the next batch to label (results/{panel}/labels/)."""
import logging

import pandas as pd

from polyjudge.analyses.labels import item_predictions, label_plan, panel_predictions
from polyjudge.data.human_labels import average_annotators, read_human_labels
from polyjudge.scripting import run_step, write_csv

log = logging.getLogger("polyjudge.label_plan")


def main(smk):
    panel, spec, settings = smk.params.panel, smk.params.human_labels, smk.params.settings
    long, _ = panel_predictions(pd.read_parquet(smk.input.predictions))
    predictions = item_predictions(long, item="item", language="language", judge="judge",
                                   score="prediction")
    scale = (spec or {}).get("score_range") or panel.get("score_range")
    labels = pd.DataFrame(columns=["item", "language", "label"])
    if spec:
        read = read_human_labels(spec["source"], items=predictions[["item", "language"]]
                                 .astype(str), score_range=scale, columns=spec["columns"],
                                 where=spec["where"] or None, language=spec["language"],
                                 unknown_items=spec["unknown_items"],
                                 base_dir=smk.params.data_dir)
        labels = average_annotators(read, spec["annotators"])
        log.info("%d labelled items (annotators combined by their %s)", len(labels),
                 spec["annotators"])
    progress, batch = label_plan(
        predictions, labels, batch=settings["batch"], sampling=settings["sampling"],
        uniform_share=settings["uniform_share"], target_halfwidth=settings["target_halfwidth"],
        level=settings["confidence"], tuned_for=settings["tuned_for"], label_range=scale,
        seed=settings["seed"])
    for row in progress.itertuples():
        log.info("%s: %d labels, half-width %.4g, %s more forecast, next batch %d",
                 row.language, row.n_labels, row.halfwidth,
                 "?" if pd.isna(row.labels_needed) else row.labels_needed, row.next_batch)
    write_csv(progress, smk.output.progress)
    write_csv(batch, smk.output.to_label)


run_step(main, snakemake)
