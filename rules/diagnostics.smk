# Diagnostics of the two-way model CBC relies on.


rule three_way:
    input:
        runs="results/{panel}/runs.parquet",
    output:
        summary="results/{panel}/diagnostics/three_way.json",
    params:
        panel=panel_config,
        alpha=config["diagnostics"]["alpha"],
    log:
        "results/{panel}/logs/three_way.log",
    resources:
        mem_mb=4000,
        runtime=20,
    script:
        "../workflow_scripts/three_way.py"


register_targets(
    lambda: expand(
        "results/{panel}/diagnostics/three_way.json", panel=panels_with("diagnostics")
    )
)
