# Held-out cross-task rank consistency (Table 2) and decision-level agreement with the oracle
# (docs/methods.md sections 2 and 3).


include: "heldout.functions.smk"


rule heldout:
    input:
        unpack(heldout_inputs),
        shape="results/{panel}/shape.json",
    output:
        tau="results/{panel}/heldout/tau.csv",
        replicates="results/{panel}/heldout/replicates.parquet",
        paired="results/{panel}/heldout/paired.csv",
    log:
        "results/{panel}/logs/heldout.log",
    benchmark:
        "results/{panel}/benchmarks/heldout.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=scaled(400, 100),
        runtime=scaled(30, 10),
    params:
        analysis="heldout",
        settings=config["heldout"],
        methods=heldout_methods,
        left_out=heldout_left_out,
        verdict_threshold=lambda wc: PANELS[wc.panel]["verdict_threshold"],
        score_range=lambda wc: PANELS[wc.panel]["score_range"],
    script:
        "../workflow_scripts/heldout.py"


rule decisions:
    input:
        shape="results/{panel}/shape.json",
        tensor="results/{panel}/tensor.parquet",
    output:
        decisions="results/{panel}/heldout/decisions.json",
    log:
        "results/{panel}/logs/decisions.log",
    benchmark:
        "results/{panel}/benchmarks/decisions.tsv"
    conda:
        "../environment.yml"
    resources:
        mem_mb=scaled(500, 400, of=["tensor"]),
        runtime=scaled(30, 20, of=["tensor"]),
    params:
        analysis="decisions",
        settings=config["decisions"],
    script:
        "../workflow_scripts/decisions.py"
