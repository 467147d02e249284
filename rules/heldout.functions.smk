# Input functions and settings of heldout.smk (Snakemake's linter keeps functions out of
# files with rules); heldout.smk includes this file first.


def heldout_inputs(wildcards):
    """Run and requirement tables for the Dawid-Skene methods, where the panel has them."""
    inputs = {"tensor": f"results/{wildcards.panel}/tensor.parquet"}
    if PANELS[wildcards.panel]["kind"] != "preference_margins":
        inputs["runs"] = f"results/{wildcards.panel}/runs.parquet"
    if has_requirements(wildcards.panel):
        inputs["requirements"] = f"results/{wildcards.panel}/requirements.parquet"
    return inputs
