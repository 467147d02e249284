# Incomplete panels: the deletion experiment and parse failures treated as missing.


rule deletion_experiment:
    input:
        tensor="results/{panel}/tensor.parquet",
    output:
        table="results/{panel}/missing/mae.csv",
    params:
        settings=config["missing"],
    log:
        "results/{panel}/logs/deletion_experiment.log",
    benchmark:
        "results/{panel}/benchmarks/deletion_experiment.tsv"
    resources:
        mem_mb=2000,
        runtime=30,
    script:
        "../workflow_scripts/deletion_experiment.py"


rule parse_failures:
    input:
        requirements="results/{panel}/requirements.parquet",
    output:
        table="results/{panel}/missing/parse_failures.csv",
    params:
        panel=panel_config,
    log:
        "results/{panel}/logs/parse_failures.log",
    resources:
        mem_mb=2000,
        runtime=20,
    script:
        "../workflow_scripts/parse_failures.py"


register_targets(
    lambda: expand("results/{panel}/missing/mae.csv", panel=panels_with("missing"))
    + expand(
        "results/{panel}/missing/parse_failures.csv", panel=panels_with("parse_failures")
    )
)
