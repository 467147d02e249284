# Ingest: raw judge runs -> validated run table -> task-level tensor and cell means.


include: "ingest.functions.smk"


rule simulate_panel:
    output:
        runs="results/{panel}/synthetic/runs.parquet",
        requirements="results/{panel}/synthetic/requirements.parquet",
        truth="results/{panel}/synthetic/truth.json",
        beta_true="results/{panel}/synthetic/beta_true.csv",
    log:
        "results/{panel}/logs/simulate_panel.log",
    conda:
        "../environment.yml"
    resources:
        mem_mb=4000,
        runtime=20,
    params:
        panel=panel_config,
    script:
        "../workflow_scripts/simulate_panel.py"


rule flatten_judgment_tree:
    input:
        judgment_tree_files,
    output:
        requirements="results/{panel}/raw/requirements.parquet",
    log:
        "results/{panel}/logs/flatten_judgment_tree.log",
    conda:
        "../environment.yml"
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        root=lambda wc: data_path(PANELS[wc.panel]["root"]),
    script:
        "../workflow_scripts/flatten_judgment_tree.py"


rule ingest:
    input:
        unpack(ingest_inputs),
    output:
        runs="results/{panel}/runs.parquet",
        manifest="results/{panel}/inputs.json",
        tensor="results/{panel}/tensor.parquet",
        cell_means="results/{panel}/cell_means.csv",
        shape="results/{panel}/shape.json",
    log:
        "results/{panel}/logs/ingest.log",
    benchmark:
        "results/{panel}/benchmarks/ingest.tsv"
    conda:
        "../environment.yml"
    resources:
        mem_mb=scaled(400, 10),
        runtime=scaled(20, 1),
    params:
        panel=panel_config,
        data_dir=str(DATA_DIR),
    script:
        "../workflow_scripts/ingest.py"


rule requirements:
    input:
        unpack(ingest_inputs),
    output:
        requirements="results/{panel}/requirements.parquet",
    log:
        "results/{panel}/logs/requirements.log",
    conda:
        "../environment.yml"
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        panel=panel_config,
        data_dir=str(DATA_DIR),
    script:
        "../workflow_scripts/requirements.py"
