# CBC: interaction beta by double-centring, calibrated scores, rankings, radius and R^2.


rule cbc:
    input:
        unpack(truth_input),
        tensor="results/{panel}/tensor.parquet",
        manifest="results/{panel}/inputs.json",
    output:
        beta="results/{panel}/cbc/beta.csv",
        beta_weighted="results/{panel}/cbc/beta_weighted.csv",
        rankings="results/{panel}/cbc/rankings.csv",
        calibrated="results/{panel}/cbc/calibrated_tensor.parquet",
        summary="results/{panel}/cbc/summary.json",
    log:
        "results/{panel}/logs/cbc.log",
    benchmark:
        "results/{panel}/benchmarks/cbc.tsv"
    conda:
        "../environment.yml"
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        eps=config["cbc"]["eps"],
        panel=panel_config,
    script:
        "../workflow_scripts/cbc.py"


register_targets(
    lambda: expand(
        "results/{panel}/cbc/{name}",
        panel=panels_with("cbc"),
        name=["beta.csv", "rankings.csv", "summary.json"],
    )
)


rule bands:
    input:
        tensor="results/{panel}/tensor.parquet",
    output:
        bands=report(
            "results/{panel}/cbc/bands.csv",
            caption="../report/bands.rst",
            category="3. Beyond the paper",
            subcategory="{panel}",
        ),
        summary="results/{panel}/cbc/bands.json",
    log:
        "results/{panel}/logs/bands.log",
    benchmark:
        "results/{panel}/benchmarks/bands.tsv"
    conda:
        "../environment.yml"
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        settings=config["bands"],
    script:
        "../workflow_scripts/bands.py"


register_targets(
    lambda: expand("results/{panel}/cbc/bands.csv", panel=panels_with("bands"))
)
