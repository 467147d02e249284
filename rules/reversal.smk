# Rank reversal between backbone pairs across languages (METHODS.md section 4).


rule reversal:
    input:
        tensor="results/{panel}/tensor.parquet",
    output:
        pairs="results/{panel}/reversal/pairs.csv",
        summary="results/{panel}/reversal/summary.json",
    params:
        settings=config["reversal"],
    log:
        "results/{panel}/logs/reversal.log",
    benchmark:
        "results/{panel}/benchmarks/reversal.tsv"
    resources:
        mem_mb=4000,
        runtime=30,
    script:
        "../workflow_scripts/reversal.py"


register_targets(
    lambda: expand("results/{panel}/reversal/summary.json", panel=panels_with("reversal"))
)
