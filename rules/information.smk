# Conditional mutual information I(score; language | backbone, task) with a permutation null
# split into independent shards (separate jobs with their own seeds) merged by a final rule.


def cmi_shards(wildcards):
    settings = config["information"]
    return expand(
        "results/{panel}/information/null/{convention}_{shard}.parquet",
        panel=wildcards.panel,
        convention=settings["conventions"],
        shard=range(settings["shards"]),
    )


rule cmi_null_shard:
    input:
        runs="results/{panel}/runs.parquet",
        tensor="results/{panel}/tensor.parquet",
    output:
        null="results/{panel}/information/null/{convention}_{shard}.parquet",
    params:
        settings=config["information"],
    wildcard_constraints:
        convention="protocol|sklearn",
        shard="[0-9]+",
    log:
        "results/{panel}/logs/cmi_null_{convention}_{shard}.log",
    benchmark:
        "results/{panel}/benchmarks/cmi_null_{convention}_{shard}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    script:
        "../workflow_scripts/cmi_null_shard.py"


rule cmi:
    input:
        runs="results/{panel}/runs.parquet",
        tensor="results/{panel}/tensor.parquet",
        shards=cmi_shards,
    output:
        summary="results/{panel}/information/cmi.json",
        null="results/{panel}/information/null.parquet",
        strata="results/{panel}/information/strata.csv",
    params:
        settings=config["information"],
    log:
        "results/{panel}/logs/cmi.log",
    resources:
        mem_mb=2000,
        runtime=20,
    script:
        "../workflow_scripts/cmi.py"


register_targets(
    lambda: expand("results/{panel}/information/cmi.json", panel=panels_with("information"))
)
