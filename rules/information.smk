# Conditional mutual information I(score; language | backbone, task) with a permutation null
# split into independent shards (separate jobs with their own seeds) merged by a final rule.


include: "information.functions.smk"


rule cmi_null_shard:
    input:
        shape="results/{panel}/shape.json",
        runs="results/{panel}/runs.parquet",
        tensor="results/{panel}/tensor.parquet",
    output:
        null="results/{panel}/information/null/{convention}_{shard}.parquet",
    log:
        "results/{panel}/logs/cmi_null_{convention}_{shard}.log",
    benchmark:
        "results/{panel}/benchmarks/cmi_null_{convention}_{shard}.tsv"
    wildcard_constraints:
        convention="protocol|sklearn",
        shard="[0-9]+",
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=scaled(300, 80, of=["runs"]),
        runtime=scaled(20, NULL_MINUTES_PER_MILLION_RUNS, of=["runs"]),
    params:
        analysis="information",
        settings=config["information"],
        source=runs_source,
    script:
        "../workflow_scripts/cmi_null_shard.py"


rule cmi:
    input:
        shape="results/{panel}/shape.json",
        runs="results/{panel}/runs.parquet",
        tensor="results/{panel}/tensor.parquet",
        shards=cmi_shards,
    output:
        summary="results/{panel}/information/cmi.json",
        null="results/{panel}/information/null.parquet",
        strata="results/{panel}/information/strata.csv",
    log:
        "results/{panel}/logs/cmi.log",
    benchmark:
        "results/{panel}/benchmarks/cmi.tsv"
    conda:
        "../environment.yml"
    resources:
        mem_mb=scaled(300, 100, of=["runs"]),
        runtime=scaled(20, 2, of=["runs"]),
    params:
        analysis="information",
        settings=config["information"],
    script:
        "../workflow_scripts/cmi.py"
