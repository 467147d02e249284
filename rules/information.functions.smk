# Input functions and settings of information.smk (Snakemake's linter keeps functions out of
# files with rules); information.smk includes this file first.


def cmi_shards(wildcards):
    settings = config["information"]
    return expand(
        "results/{panel}/information/null/{convention}_{shard}.parquet",
        panel=wildcards.panel,
        convention=settings["conventions"],
        shard=range(settings["shards"]),
    )


# runtime of a null shard: about 0.3 CPU s per permutation and 10^6 runs (docs/performance.md),
# requested as 3 s (0.05 min) for a loaded machine
NULL_MINUTES_PER_MILLION_RUNS = (
    0.05 * config["information"]["permutations"] / config["information"]["shards"]
)


def information_targets():
    return expand(
        "results/{panel}/information/cmi.json", panel=panels_with("information")
    )
