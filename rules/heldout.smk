# Held-out cross-task rank consistency (Table 2) and decision-level agreement with the oracle
# (METHODS.md sections 2 and 3).


def heldout_inputs(wildcards):
    """Run and requirement tables for the Dawid-Skene methods, where the panel has them."""
    inputs = {"tensor": f"results/{wildcards.panel}/tensor.parquet"}
    if PANELS[wildcards.panel]["kind"] != "preference_margins":
        inputs["runs"] = f"results/{wildcards.panel}/runs.parquet"
    if has_requirements(wildcards.panel):
        inputs["requirements"] = f"results/{wildcards.panel}/requirements.parquet"
    return inputs


rule heldout:
    input:
        unpack(heldout_inputs),
    output:
        tau="results/{panel}/heldout/tau.csv",
        replicates="results/{panel}/heldout/replicates.parquet",
        paired="results/{panel}/heldout/paired.csv",
    params:
        settings=config["heldout"],
        methods=lambda wc: PANELS[wc.panel]["heldout_methods"] or config["heldout"]["methods"],
    log:
        "results/{panel}/logs/heldout.log",
    benchmark:
        "results/{panel}/benchmarks/heldout.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    script:
        "../workflow_scripts/heldout.py"


rule decisions:
    input:
        tensor="results/{panel}/tensor.parquet",
    output:
        decisions="results/{panel}/heldout/decisions.json",
    params:
        settings=config["decisions"],
    log:
        "results/{panel}/logs/decisions.log",
    resources:
        mem_mb=2000,
        runtime=20,
    script:
        "../workflow_scripts/decisions.py"


register_targets(
    lambda: expand("results/{panel}/heldout/tau.csv", panel=panels_with("heldout"))
    + expand("results/{panel}/heldout/decisions.json", panel=panels_with("decisions"))
)
