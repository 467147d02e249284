# Input functions and settings of heldout.smk (Snakemake's linter keeps functions out of
# files with rules); heldout.smk includes this file first.
from polyjudge.analyses.binary_verdicts import REQUIREMENT_METHODS
from polyjudge.workflow_config import has_requirements


def heldout_inputs(wildcards):
    """Run and requirement tables for the Dawid-Skene methods, where the panel has them."""
    inputs = {"tensor": f"results/{wildcards.panel}/tensor.parquet"}
    if PANELS[wildcards.panel]["kind"] != "preference_margins":
        inputs["runs"] = f"results/{wildcards.panel}/runs.parquet"
    if has_requirements(PANELS[wildcards.panel]):
        inputs["requirements"] = f"results/{wildcards.panel}/requirements.parquet"
    return inputs


def heldout_methods(wildcards):
    """The panel's own `heldout_methods` as listed, else `heldout.methods` without those that
    need requirement verdicts on a panel that has none (they could not run there)."""
    panel = PANELS[wildcards.panel]
    return panel["heldout_methods"] or [
        name
        for name in config["heldout"]["methods"]
        if name not in heldout_left_out(wildcards)
    ]


def heldout_left_out(wildcards):
    """The methods of `heldout.methods` not run on the panel (it lacks their data)."""
    panel = PANELS[wildcards.panel]
    if panel["heldout_methods"] or has_requirements(panel):
        return []
    return [
        name for name in config["heldout"]["methods"] if name in REQUIREMENT_METHODS
    ]


def heldout_targets():
    return expand(
        "results/{panel}/heldout/tau.csv", panel=panels_with("heldout")
    ) + expand("results/{panel}/heldout/decisions.json", panel=panels_with("decisions"))
