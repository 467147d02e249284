# Input functions and settings of missing.smk (Snakemake's linter keeps functions out of
# files with rules); missing.smk includes this file first.


def missing_targets():
    return expand(
        "results/{panel}/missing/mae.csv", panel=panels_with("missing")
    ) + expand(
        "results/{panel}/missing/parse_failures.csv",
        panel=panels_with("parse_failures"),
    )
