"""Average runs over frameworks into the task-level tensor and the cell-mean matrix."""
import logging

from judgecal import io
from judgecal.scripting import run_step, write_csv, write_parquet

log = logging.getLogger("judgecal.tensor")


def main(smk):
    panel_config = smk.params.panel
    runs = io.read_table(smk.input.runs)
    panel = io.build_panel(runs, smk.input.runs, panel_config.get("languages"),
                           panel_config.get("backbones"),
                           allow_missing_cells=panel_config["missing"] == "omit")
    missing = int((~(panel.n_runs > 0)).sum())
    log.info("tensor %s, %d empty cells", panel.shape, missing)
    write_parquet(panel.to_frame(), smk.output.tensor)
    write_csv(panel.matrix_frame(panel.cell_means(), "mean"), smk.output.cell_means)


run_step(main, snakemake)
