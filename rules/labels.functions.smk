# Input functions and settings of labels.smk (Snakemake's linter keeps functions out of files
# with rules); labels.smk includes this file first.
from polyjudge.data.sources import source_inputs
from polyjudge.workflow_config import has_requirements


def labels_panels():
    """Panels that list `labels` (they name `human_labels`; the config check says so)."""
    return [name for name, panel in PANELS.items() if "labels" in panel["analyses"]]


def labels_targets():
    return expand(
        "results/{panel}/labels/{name}",
        panel=labels_panels(),
        name=["estimates.csv", "differences.csv", "judge_errors.csv", "ranks.csv"],
    )


def labels_inputs(wildcards):
    """The judges' predictions (requirement verdicts where the panel has them, else its runs)
    and the files of the human labels' source."""
    panel = PANELS[wildcards.panel]
    table = "requirements" if has_requirements(panel) else "runs"
    files = source_inputs(panel["human_labels"]["source"], DATA_DIR)
    return {
        "predictions": f"results/{wildcards.panel}/{table}.parquet",
        "human_labels": [
            local(f) for f in ([files] if isinstance(files, str) else files)
        ],
    }
