"""Validate a panel's raw inputs: the standard run table, the task-level tensor (framework
means) and the cell-mean matrix, each its own file under results/{panel}/."""
import logging

from judgecal import io
from judgecal.scripting import run_step, write_csv, write_json, write_parquet

log = logging.getLogger("judgecal.ingest")


def main(smk):
    panel = smk.params.panel
    kind = panel["kind"]
    inputs = dict(smk.input.items())
    if kind == "preference_margins":
        runs = io.load_preference_margins(inputs, source_dir=".")
        source = ", ".join(inputs.values())
    else:
        columns = panel.get("columns") or {}
        runs = None
        source = inputs.get("runs") or inputs["requirements"]
        if "runs" in inputs:
            runs = io.read_table(inputs["runs"], mapping=columns)
        if "requirements" in inputs:
            table = io.read_table(inputs["requirements"], mapping=columns)
            recomputed = io.runs_from_requirements(table, inputs["requirements"])
            log.info("recomputed %d run scores from %d requirement verdicts",
                     len(recomputed), len(table))
            if runs is None:
                runs = recomputed
            else:
                checked = io.validate_runs(runs, inputs["runs"], panel["score_range"],
                                           panel["missing"])
                io.check_runs_agree(checked, recomputed, inputs["runs"])
                log.info("run table agrees with the requirement table")
    runs = io.validate_runs(runs, source, panel["score_range"], panel["missing"])
    tensor = io.build_panel(runs, source, panel.get("languages"), panel.get("backbones"),
                            allow_missing_cells=panel["missing"] == "omit")
    log.info("%d runs: %d tasks x %d languages x %d backbones, %d empty cells", len(runs),
             *tensor.shape, int((tensor.n_runs == 0).sum()))
    write_parquet(runs, smk.output.runs)
    write_parquet(tensor.to_frame(), smk.output.tensor)
    write_csv(tensor.matrix_frame(tensor.cell_means(), "mean"), smk.output.cell_means)
    write_json({"kind": kind, "n_runs": len(runs),
                "files": {name: {"path": path, "sha256": io.sha256(path)}
                          for name, path in inputs.items()}}, smk.output.manifest)


run_step(main, snakemake)
