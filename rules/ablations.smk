# Ablations and leave-one-language-out extrapolation (docs/methods.md section 5). Each output is
# its own target and takes its settings through params, so editing one ablation reruns only it.


include: "ablations.functions.smk"


rule task_count:
    input:
        unpack(truth_input),
        shape="results/{panel}/shape.json",
        tensor="results/{panel}/tensor.parquet",
    output:
        table="results/{panel}/ablations/task_count.csv",
    log:
        "results/{panel}/logs/task_count.log",
    benchmark:
        "results/{panel}/benchmarks/task_count.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=scaled(500, 400, of=["tensor"]),
        runtime=scaled(30, 20, of=["tensor"]),
    params:
        analysis="task_count",
        settings=config["ablations"]["task_count"],
        eps=config["cbc"]["eps"],
    script:
        "../workflow_scripts/task_count.py"


rule backbone_subsets:
    input:
        shape="results/{panel}/shape.json",
        tensor="results/{panel}/tensor.parquet",
    output:
        table="results/{panel}/ablations/backbone_subsets.csv",
    log:
        "results/{panel}/logs/backbone_subsets.log",
    benchmark:
        "results/{panel}/benchmarks/backbone_subsets.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=scaled(500, 400, of=["tensor"]),
        runtime=scaled(30, 20, of=["tensor"]),
    params:
        analysis="backbone_subsets",
        settings=config["ablations"]["backbone_subsets"],
    script:
        "../workflow_scripts/backbone_subsets.py"


rule requirement_type:
    input:
        shape="results/{panel}/shape.json",
        requirements="results/{panel}/requirements.parquet",
        types=lambda wc: data_input(PANELS[wc.panel]["requirement_types"]),
    output:
        table="results/{panel}/ablations/requirement_type.csv",
    log:
        "results/{panel}/logs/requirement_type.log",
    benchmark:
        "results/{panel}/benchmarks/requirement_type.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=scaled(400, 600, of=["requirements"]),
        runtime=scaled(30, 5, of=["requirements"]),
    params:
        analysis="requirement_type",
        settings=config["ablations"]["requirement_type"],
        panel=panel_config,
    script:
        "../workflow_scripts/requirement_type.py"


rule lolo:
    input:
        shape="results/{panel}/shape.json",
        tensor="results/{panel}/tensor.parquet",
    output:
        table="results/{panel}/lolo/lolo.csv",
    log:
        "results/{panel}/logs/lolo.log",
    benchmark:
        "results/{panel}/benchmarks/lolo.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=scaled(500, 400, of=["tensor"]),
        runtime=scaled(30, 20, of=["tensor"]),
    params:
        analysis="lolo",
        settings=config["lolo"],
    script:
        "../workflow_scripts/lolo.py"
