# Rank reversal between backbone pairs across languages (docs/methods.md section 4).


include: "reversal.functions.smk"


rule reversal:
    input:
        shape="results/{panel}/shape.json",
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
        mem_mb=scaled(500, 400, of=["tensor"]),
        runtime=scaled(30, 20, of=["tensor"]),
    params:
        analysis="reversal",
        settings=config["reversal"],
    script:
        "../workflow_scripts/reversal.py"
