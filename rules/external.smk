# External preference panel (M-RewardBench): judge-aware BTL comparator and human-anchor
# agreement (docs/methods.md section 7). CBC, held-out tau and reversal run through the same rules
# as every other panel.


include: "external.functions.smk"


rule btl_tau:
    input:
        shape="results/{panel}/shape.json",
        tensor="results/{panel}/tensor.parquet",
    output:
        table="results/{panel}/external/btl_tau.csv",
        replicates="results/{panel}/external/btl_replicates.parquet",
        matrix="results/{panel}/external/btl_matrix.csv",
    log:
        "results/{panel}/logs/btl_tau.log",
    benchmark:
        "results/{panel}/benchmarks/btl_tau.tsv"
    conda:
        "../environment.yml"
    resources:
        mem_mb=scaled(500, 400, of=["tensor"]),
        runtime=scaled(30, 20, of=["tensor"]),
    params:
        analysis="external",
        settings=config["external"]["btl"],
    script:
        "../workflow_scripts/btl_tau.py"


rule human_anchor:
    input:
        unpack(anchor_inputs),
        shape="results/{panel}/shape.json",
        tensor="results/{panel}/tensor.parquet",
        beta="results/{panel}/cbc/beta.csv",
    output:
        summary="results/{panel}/external/human_anchor.json",
        whole_panel="results/{panel}/external/human_anchor_whole_panel.json",
        sample="results/{panel}/external/human_anchor_sample.csv",
    log:
        "results/{panel}/logs/human_anchor.log",
    benchmark:
        "results/{panel}/benchmarks/human_anchor.tsv"
    conda:
        "../environment.yml"
    resources:
        mem_mb=scaled(400, 400, of=["tensor"]),
        runtime=scaled(20, 20, of=["tensor"]),
    params:
        analysis="external",
        settings=config["external"]["human_anchor"],
    script:
        "../workflow_scripts/human_anchor.py"
