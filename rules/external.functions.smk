# Input functions and settings of external.smk (Snakemake's linter keeps functions out of
# files with rules); external.smk includes this file first.


def anchor_inputs(wildcards):
    sample = PANELS[wildcards.panel]["anchor_sample"]
    return {"sample": data_input(sample)} if sample else {}


def external_targets():
    return expand(
        "results/{panel}/external/{name}",
        panel=panels_with("external"),
        name=["btl_tau.csv", "human_anchor.json"],
    )
