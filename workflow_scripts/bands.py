"""Simultaneous task-bootstrap band for all beta cells, beside the Gaussian union radius."""
import logging

from polyjudge.cbc.band import bootstrap_band
from polyjudge.data import io, shape
from polyjudge.scripting import run_step, write_csv, write_json

log = logging.getLogger("polyjudge.bands")


def main(smk):
    panel, dropped = shape.complete_items(
        io.read_panel(smk.input.tensor), smk.params.incomplete_items, "the simultaneous band",
        smk.params.source, smk.wildcards.panel)
    if dropped:  # `incomplete_items: drop`: named here and in bands.json (the page says so)
        log.warning("left out %d item(s) with a missing score (incomplete_items: drop): %s",
                    len(dropped), ", ".join(map(str, dropped)))
    settings = smk.params.settings
    band = bootstrap_band(panel, settings["replicates"], settings["seed"], settings["level"])
    write_csv(band.frame, smk.output.bands)
    summary = {
        "level": band.level, "n_replicates": band.n_replicates, "seed": settings["seed"],
        "critical_value": band.critical_value,
        "mean_half_width": float((band.frame["band_high"] - band.frame["beta"]).mean()),
        "max_half_width": float((band.frame["band_high"] - band.frame["beta"]).max()),
        "max_dev_radius": band.max_dev_radius,
        "radius_total_sd": band.radius_total_sd,
        "radius_residual_sd": band.radius_residual_sd,
        "n_cells_excluding_zero": int(band.frame["excludes_zero"].sum()),
        "dropped_items": [str(task) for task in dropped],
        "note": "studentised max-|t| bootstrap band (each replicate divided by its own SE) "
                "beside the Gaussian union-bound radius with the total-SD and residual-SD sigma",
    }
    log.info("critical value %.3f, mean half-width %.3f vs union radius %.3f (total SD)",
             summary["critical_value"], summary["mean_half_width"], summary["radius_total_sd"])
    write_json(summary, smk.output.summary)


run_step(main, snakemake)
