# Input functions and settings of heldout.smk (Snakemake's linter keeps functions out of
# files with rules); heldout.smk includes this file first.
from polyjudge.workflow_config import has_requirements


def heldout_inputs(wildcards):
    """Run and requirement tables for the Dawid-Skene methods, where the panel has them."""
    inputs = {"tensor": f"results/{wildcards.panel}/tensor.parquet"}
    if PANELS[wildcards.panel]["kind"] != "preference_margins":
        inputs["runs"] = f"results/{wildcards.panel}/runs.parquet"
    if has_requirements(PANELS[wildcards.panel]):
        inputs["requirements"] = f"results/{wildcards.panel}/requirements.parquet"
    return inputs


def heldout_targets():
    return expand(
        "results/{panel}/heldout/tau.csv", panel=panels_with("heldout")
    ) + expand("results/{panel}/heldout/decisions.json", panel=panels_with("decisions"))
