# CBC: interaction beta by double-centring, calibrated scores, rankings, radius and R^2; the
# calibrator file of every panel with `cbc`, applied to other panels (`calibrator:`), and the
# effect of adding judges to a panel (`extends:`).


include: "calibrate.functions.smk"


rule cbc:
    input:
        unpack(truth_input),
        shape="results/{panel}/shape.json",
        tensor="results/{panel}/tensor.parquet",
        manifest="results/{panel}/inputs.json",
    output:
        beta="results/{panel}/cbc/beta.csv",
        beta_weighted="results/{panel}/cbc/beta_weighted.csv",
        rankings="results/{panel}/cbc/rankings.csv",
        calibrated="results/{panel}/cbc/calibrated_tensor.parquet",
        summary="results/{panel}/cbc/summary.json",
        leaderboard="results/{panel}/cbc/leaderboard.csv",
    log:
        "results/{panel}/logs/cbc.log",
    benchmark:
        "results/{panel}/benchmarks/cbc.tsv"
    conda:
        "../environment.yml"
    resources:
        mem_mb=scaled(500, 400, of=["tensor"]),
        runtime=scaled(30, 20, of=["tensor"]),
    params:
        analysis="cbc",
        eps=config["cbc"]["eps"],
        panel=panel_config,
        intervals=config["rank_intervals"],
    script:
        "../workflow_scripts/cbc.py"


rule calibrator:
    input:
        shape="results/{panel}/shape.json",
        runs="results/{panel}/runs.parquet",
        tensor="results/{panel}/tensor.parquet",
        cell_means="results/{panel}/cell_means.csv",
    output:
        calibrator="results/{panel}/cbc/calibrator.json",
    log:
        "results/{panel}/logs/calibrator.log",
    benchmark:
        "results/{panel}/benchmarks/calibrator.tsv"
    conda:
        "../environment.yml"
    resources:
        mem_mb=scaled(400, 100, of=["runs"]),
        runtime=scaled(30, 3, of=["runs"]),
    params:
        analysis="cbc",
        panel=panel_config,
        band=calibrator_band,
        incomplete_items=lambda wc: PANELS[wc.panel]["incomplete_items"],
        source=runs_source,
    script:
        "../workflow_scripts/calibrator.py"


rule apply_calibrator:
    input:
        runs="results/{panel}/runs.parquet",
        calibrator=applied_calibrator,
    output:
        runs="results/{panel}/applied/runs.parquet",
        rankings="results/{panel}/applied/rankings.csv",
        summary="results/{panel}/applied/summary.json",
    log:
        "results/{panel}/logs/apply_calibrator.log",
    benchmark:
        "results/{panel}/benchmarks/apply_calibrator.tsv"
    conda:
        "../environment.yml"
    resources:
        mem_mb=scaled(400, 700, of=["runs"]),
        runtime=scaled(30, 3, of=["runs"]),
    params:
        source=lambda wc: PANELS[wc.panel]["calibrator"],
        unseen=lambda wc: PANELS[wc.panel]["unseen"],
        intervals=config["rank_intervals"],
    script:
        "../workflow_scripts/apply_calibrator.py"


rule extension:
    input:
        unpack(extension_inputs),
    output:
        ranks="results/{panel}/extend/new_judge.csv",
        shift="results/{panel}/extend/beta_shift.csv",
        summary="results/{panel}/extend/summary.json",
    log:
        "results/{panel}/logs/extension.log",
    benchmark:
        "results/{panel}/benchmarks/extension.tsv"
    conda:
        "../environment.yml"
    resources:
        mem_mb=scaled(400, 700),
        runtime=scaled(30, 3),
    params:
        base=lambda wc: PANELS[wc.panel]["extends"],
        intervals=config["rank_intervals"],
    script:
        "../workflow_scripts/extension.py"


rule bands:
    input:
        shape="results/{panel}/shape.json",
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
        mem_mb=scaled(500, 400, of=["tensor"]),
        runtime=scaled(30, 20, of=["tensor"]),
    params:
        analysis="bands",
        incomplete_items=lambda wc: PANELS[wc.panel]["incomplete_items"],
        source=runs_source,
        settings=config["bands"],
    script:
        "../workflow_scripts/bands.py"
