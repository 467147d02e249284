# Input functions and settings of reversal.smk (Snakemake's linter keeps functions out of
# files with rules); reversal.smk includes this file first.


def reversal_targets():
    return expand(
        "results/{panel}/reversal/summary.json", panel=panels_with("reversal")
    )
