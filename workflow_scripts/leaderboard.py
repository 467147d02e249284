"""Per-language leaderboards, raw and after CBC, with task-bootstrap mean and rank intervals."""
import logging

from judgecal.analyses.leaderboard import leaderboard
from judgecal.data import io
from judgecal.scripting import run_step, write_csv

log = logging.getLogger("judgecal.leaderboard")


def main(smk):
    panel = io.read_panel(smk.input.tensor)
    settings = smk.params.intervals
    frame = leaderboard(panel, smk.params.panel["estimator"], settings["replicates"],
                        settings["level"], settings["seed"])
    log.info("%d languages x %d backbones, %d replicates, level %g", len(panel.languages),
             len(panel.backbones), settings["replicates"], settings["level"])
    write_csv(frame, smk.output.leaderboard)


run_step(main, snakemake)
