# Rank reversal between backbone pairs across languages (docs/methods.md section 4).


rule reversal:
    input:
        tensor="results/{panel}/tensor.parquet",
    output:
        pairs="results/{panel}/reversal/pairs.csv",
        summary="results/{panel}/reversal/summary.json",
    log:
        "results/{panel}/logs/reversal.log",
    benchmark:
        "results/{panel}/benchmarks/reversal.tsv"
    conda:
        "../environment.yml"
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        settings=config["reversal"],
    script:
        "../workflow_scripts/reversal.py"


register_targets(
    lambda: expand(
        "results/{panel}/reversal/summary.json", panel=panels_with("reversal")
    )
)
