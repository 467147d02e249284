# Human labels beside the judges: prediction-powered estimates per language and judged system,
# the systems' differences and rank sets and the judges' errors (docs/methods.md section 12).


include: "labels.functions.smk"


rule labels:
    input:
        unpack(labels_inputs),
    output:
        estimates=report(
            "results/{panel}/labels/estimates.csv",
            caption="../report/labels.rst",
            category="0. Judge card",
            subcategory="{panel}",
        ),
        differences="results/{panel}/labels/differences.csv",
        errors="results/{panel}/labels/judge_errors.csv",
        ranks="results/{panel}/labels/ranks.csv",
    log:
        "results/{panel}/logs/labels.log",
    benchmark:
        "results/{panel}/benchmarks/labels.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=scaled(400, 600, of=["predictions"]),
        runtime=scaled(10, 5, of=["predictions"]),
    params:
        panel=panel_config,
        human_labels=lambda wildcards: PANELS[wildcards.panel]["human_labels"],
        settings=config["labels"],
        data_dir=str(DATA_DIR),
    script:
        "../workflow_scripts/labels.py"
