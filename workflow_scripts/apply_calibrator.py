"""Apply a calibrator fitted elsewhere (another panel's cbc/calibrator.json or a file) to this
panel's validated runs: calibrated runs with intervals, per-language rankings, a summary."""
import logging

from polyjudge import Calibrator
from polyjudge.data import io
from polyjudge.scripting import run_step, write_csv, write_json, write_parquet

log = logging.getLogger("polyjudge.apply")
STANDARD = dict(task="task", language="language", backbone="backbone", score="score",
                framework="framework")


def main(smk):
    calibrator = Calibrator.load(smk.input.calibrator)
    # runs.parquet has the standard column names, whatever names the calibrator was fitted with
    calibrator.set_params(unseen=smk.params.unseen, **STANDARD)
    runs = io.read_table(smk.input.runs)
    source = f"{smk.input.runs} (calibrator {smk.params.source})"
    calibrated = calibrator.transform(runs, source=source)
    settings = smk.params.intervals
    rankings = calibrator.rank(runs, n_replicates=settings["replicates"],
                               level=settings["level"], seed=settings["seed"], source=source)
    passed = calibrated.loc[~calibrated["calibrated"], ["language", "backbone"]]
    pairs = sorted({(str(l), str(b)) for l, b in passed.itertuples(index=False)})
    if pairs:
        log.warning("%d runs of %d (language, backbone) pair(s) the calibrator was not fitted on "
                    "passed through uncorrected (unseen: raw): %s", len(passed), len(pairs),
                    pairs[:10])
    summary = {
        "calibrator": smk.params.source, "file": str(smk.input.calibrator),
        "training_sha256": calibrator.training_sha256_, "estimator": calibrator.estimator_,
        "band": calibrator.band_, "unseen": smk.params.unseen,
        "n_runs": int(len(calibrated)), "n_calibrated": int(calibrated["calibrated"].sum()),
        "uncalibrated_pairs": [list(p) for p in pairs],
        "rank_intervals": dict(settings),
        "same_order_after_calibration": bool(
            rankings[rankings["calibrated"]].groupby("backbone")["rank_cbc"].nunique()
            .le(1).all()),
    }
    log.info("%d of %d runs calibrated with %s", summary["n_calibrated"], summary["n_runs"],
             smk.params.source)
    write_parquet(calibrated, smk.output.runs)
    write_csv(rankings, smk.output.rankings)
    write_json(summary, smk.output.summary)


run_step(main, snakemake)
