# Diagnostics of the two-way model CBC relies on.


include: "diagnostics.functions.smk"


rule three_way:
    input:
        shape="results/{panel}/shape.json",
        runs="results/{panel}/runs.parquet",
    output:
        summary=report(
            "results/{panel}/diagnostics/three_way.json",
            caption="../report/three_way.rst",
            category="3. Beyond the paper",
            subcategory="{panel}",
        ),
    log:
        "results/{panel}/logs/three_way.log",
    benchmark:
        "results/{panel}/benchmarks/three_way.tsv"
    conda:
        "../environment.yml"
    resources:
        mem_mb=scaled(300, 60, of=["runs"]),
        runtime=scaled(20, 1, of=["runs"]),
    params:
        analysis="diagnostics",
        panel=panel_config,
        alpha=config["diagnostics"]["alpha"],
        source=runs_source,
    script:
        "../workflow_scripts/three_way.py"
