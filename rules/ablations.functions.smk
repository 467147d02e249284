# Input functions and settings of ablations.smk (Snakemake's linter keeps functions out of
# files with rules); ablations.smk includes this file first.


def ablations_targets():
    return [
        f"results/{panel}/ablations/{name}.csv"
        for name in ("task_count", "backbone_subsets", "requirement_type")
        for panel in panels_with(name)
    ] + expand("results/{panel}/lolo/lolo.csv", panel=panels_with("lolo"))
