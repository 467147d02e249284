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
