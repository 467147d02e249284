"""Fit the panel's calibrator on its validated runs and save it (cbc/calibrator.json): the same
beta as cbc/beta.csv, carried to other panels (`calibrator:`) and to `polyjudge apply`."""
import logging

import pandas as pd
import pyarrow.parquet as pq

from polyjudge import Calibrator
from polyjudge.calibrator import training_sha256_file
from polyjudge.data import io, shape
from polyjudge.scripting import run_step

log = logging.getLogger("polyjudge.calibrator")


def main(smk):
    panel, band = smk.params.panel, smk.params.band
    cells = io.read_table(smk.input.cell_means)  # the panel's axis order, as cbc/ uses it
    calibrator = Calibrator(score_range=panel["score_range"], missing=panel["missing"],
                            estimator=panel["estimator"],
                            languages=list(pd.unique(cells["language"])),
                            backbones=list(pd.unique(cells["backbone"])),
                            band_replicates=0)  # a band only with the panel's `bands`
    tensor = io.read_panel(smk.input.tensor)
    if band and shape.complete_items(tensor, smk.params.incomplete_items, "the simultaneous "
                                     "band", smk.params.source, smk.wildcards.panel)[1]:
        # `incomplete_items: drop`: the band needs complete items, the calibrator's beta is
        # fitted on every item; cbc/bands.csv has the band of the complete items
        log.warning("no band in the calibrator: items miss a score (incomplete_items: drop; "
                    "cbc/bands.csv is the band of the complete items)")
        band = None
    if band:
        calibrator.set_params(band_replicates=band["replicates"], band_level=band["level"],
                              seed=band["seed"])
    # ingest validated the runs and averaged them into the tensor: fit on it, hash the runs in
    # batches (memory of the array, not of a data frame of the runs)
    calibrator.fit_panel(tensor,
                         pq.read_metadata(smk.input.runs).num_rows,
                         training_sha256_file(smk.input.runs), source=smk.input.runs)
    log.info("%d runs, %d tasks, %d languages x %d backbones, estimator %s, %s",
             calibrator.n_runs_, calibrator.n_tasks_, len(calibrator.languages_),
             len(calibrator.backbones_), calibrator.estimator_,
             f"band at level {band['level']}" if band else "no band")
    calibrator.save(smk.output.calibrator)


run_step(main, snakemake)
