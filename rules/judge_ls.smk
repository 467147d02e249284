# Judge-LS: language-switching and position invariance of pairwise judges (docs/methods.md
# section 8).


include: "judge_ls.functions.smk"


rule simulate_judge_ls:
    output:
        verdicts="results/{panel}/synthetic/verdicts.parquet",
        truth="results/{panel}/synthetic/verdict_truth.json",
        reference_texts="results/{panel}/synthetic/texts_reference.parquet",
        # the synthetic protocol's variants: Chinese (full translation), code-switched
        zh="results/{panel}/synthetic/texts_zh.parquet",
        cs="results/{panel}/synthetic/texts_cs.parquet",
    log:
        "results/{panel}/logs/simulate_judge_ls.log",
    conda:
        "../environment.yml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        panel=panel_config,
    script:
        "../workflow_scripts/simulate_judge_ls.py"


rule judge_ls:
    input:
        unpack(judge_ls_inputs),
    output:
        accuracy="results/{panel}/judge_ls/accuracy.csv",
        flips="results/{panel}/judge_ls/flips.csv",
        position="results/{panel}/judge_ls/position.csv",
        tie_probe="results/{panel}/judge_ls/tie_probe.csv",
        audit="results/{panel}/judge_ls/audit.csv",
        sensitivity="results/{panel}/judge_ls/sensitivity.csv",
        recovery="results/{panel}/judge_ls/recovery.csv",
        summary="results/{panel}/judge_ls/summary.md",
        choices="results/{panel}/judge_ls/choices.parquet",
        manifest="results/{panel}/judge_ls/inputs.json",
    log:
        "results/{panel}/logs/judge_ls.log",
    benchmark:
        "results/{panel}/benchmarks/judge_ls.tsv"
    conda:
        "../environment.yml"
    resources:
        mem_mb=4000,
        runtime=20,
    params:
        panel=panel_config,
        data_dir=str(DATA_DIR),
        settings=config["judge_ls"],
    script:
        "../workflow_scripts/judge_ls.py"
