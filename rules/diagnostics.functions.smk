# Input functions and settings of diagnostics.smk (Snakemake's linter keeps functions out of
# files with rules); diagnostics.smk includes this file first.


def diagnostics_targets():
    return expand(
        "results/{panel}/diagnostics/three_way.json", panel=panels_with("diagnostics")
    )
