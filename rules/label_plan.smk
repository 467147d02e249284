# The label plan: each language's anytime-valid interval from the human labels so far, the
# labels it still needs, and the next batch to label (docs/methods.md section 12).


include: "label_plan.functions.smk"


rule label_plan:
    input:
        unpack(label_plan_inputs),
    output:
        to_label="results/{panel}/labels/to_label.csv",
        progress="results/{panel}/labels/progress.csv",
    log:
        "results/{panel}/logs/label_plan.log",
    benchmark:
        "results/{panel}/benchmarks/label_plan.tsv"
    conda:
        "../environment.yml"
    threads: 1
    resources:
        mem_mb=scaled(400, 600, of=["predictions"]),
        runtime=scaled(10, 5, of=["predictions"]),
    params:
        panel=panel_config,
        human_labels=lambda wildcards: PANELS[wildcards.panel]["human_labels"],
        settings=config["label_plan"],
        data_dir=str(DATA_DIR),
    script:
        "../workflow_scripts/label_plan.py"
