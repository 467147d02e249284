# Input functions and settings of external.smk (Snakemake's linter keeps functions out of
# files with rules); external.smk includes this file first.


def anchor_inputs(wildcards):
    sample = PANELS[wildcards.panel]["anchor_sample"]
    return {"sample": data_input(sample)} if sample else {}
