# Incomplete panels: the deletion experiment and parse failures treated as missing.


include: "missing.functions.smk"


rule deletion_experiment:
    input:
        shape="results/{panel}/shape.json",
        tensor="results/{panel}/tensor.parquet",
    output:
        table=report(
            "results/{panel}/missing/mae.csv",
            caption="../report/deletion.rst",
            category="3. Beyond the paper",
            subcategory="{panel}",
        ),
    log:
        "results/{panel}/logs/deletion_experiment.log",
    benchmark:
        "results/{panel}/benchmarks/deletion_experiment.tsv"
    conda:
        "../environment.yml"
    resources:
        mem_mb=scaled(300, 200, of=["tensor"]),
        runtime=scaled(30, 20, of=["tensor"]),
    params:
        analysis="missing",
        settings=config["missing"],
    script:
        "../workflow_scripts/deletion_experiment.py"


rule parse_failures:
    input:
        shape="results/{panel}/shape.json",
        requirements="results/{panel}/requirements.parquet",
    output:
        table=report(
            "results/{panel}/missing/parse_failures.csv",
            caption="../report/parse_failures.rst",
            category="3. Beyond the paper",
            subcategory="{panel}",
        ),
    log:
        "results/{panel}/logs/parse_failures.log",
    benchmark:
        "results/{panel}/benchmarks/parse_failures.tsv"
    conda:
        "../environment.yml"
    resources:
        mem_mb=scaled(400, 600, of=["requirements"]),
        runtime=scaled(20, 5, of=["requirements"]),
    params:
        analysis="parse_failures",
        panel=panel_config,
    script:
        "../workflow_scripts/parse_failures.py"


# every panel whose cells may be missing (`missing: omit`): does a judge's missing rate depend
# on the item's score as the other judges give it?
rule informative_missing:
    input:
        tensor="results/{panel}/tensor.parquet",
    output:
        table=report(
            "results/{panel}/missing/mnar_check.csv",
            caption="../report/mnar_check.rst",
            category="3. Beyond the paper",
            subcategory="{panel}",
        ),
    log:
        "results/{panel}/logs/informative_missing.log",
    benchmark:
        "results/{panel}/benchmarks/informative_missing.tsv"
    conda:
        "../environment.yml"
    resources:
        mem_mb=scaled(300, 200, of=["tensor"]),
        runtime=scaled(10, 20, of=["tensor"]),
    params:
        alpha=config["missing"]["check_alpha"],
        permutations=config["missing"]["check_permutations"],
        seed=config["missing"]["seed"],
    script:
        "../workflow_scripts/informative_missing.py"
