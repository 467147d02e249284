# Input functions of label_plan.smk (Snakemake's linter keeps functions out of files with
# rules); label_plan.smk includes this file first.
from polyjudge.data.sources import source_inputs
from polyjudge.workflow_config import has_requirements


def label_plan_panels():
    """Panels that list `label_plan` (with or without `human_labels` yet: the first batch
    needs none)."""
    return [name for name, panel in PANELS.items() if "label_plan" in panel["analyses"]]


def label_plan_targets():
    return expand(
        "results/{panel}/labels/{name}",
        panel=label_plan_panels(),
        name=["to_label.csv", "progress.csv"],
    )


def label_plan_inputs(wildcards):
    """The judges' predictions (requirement verdicts where the panel has them, else its
    runs) and, once the lab has labelled some items, the files of the human labels."""
    panel = PANELS[wildcards.panel]
    table = "requirements" if has_requirements(panel) else "runs"
    inputs = {"predictions": f"results/{wildcards.panel}/{table}.parquet"}
    if panel.get("human_labels"):
        files = source_inputs(panel["human_labels"]["source"], DATA_DIR)
        inputs["human_labels"] = [
            local(f) for f in ([files] if isinstance(files, str) else files)
        ]
    return inputs
