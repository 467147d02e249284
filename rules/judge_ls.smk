# Judge-LS: language-switching and position invariance of pairwise judges (METHODS.md section 8).


def judge_ls_inputs(wildcards):
    panel = PANELS[wildcards.panel]
    if panel["source"] == "synthetic":
        base = f"results/{wildcards.panel}/synthetic"
        return {
            "verdicts": f"{base}/verdicts.parquet",
            "truth": f"{base}/verdict_truth.json",
            "reference_texts": f"{base}/texts_reference.parquet",
            **{
                f"variant_{c}": f"{base}/texts_{c}.parquet"
                for c in panel["variant_texts"]
            },
        }
    inputs = {"verdicts": data_path(panel["verdicts"])}
    if panel["reference_texts"]:
        inputs["reference_texts"] = data_path(panel["reference_texts"])
        for condition, variant in panel["variant_texts"].items():
            inputs[f"variant_{condition}"] = data_path(variant["path"])
    return inputs


rule simulate_judge_ls:
    output:
        verdicts="results/{panel}/synthetic/verdicts.parquet",
        truth="results/{panel}/synthetic/verdict_truth.json",
        reference_texts="results/{panel}/synthetic/texts_reference.parquet",
        # the synthetic protocol's variants: Chinese (full translation), code-switched
        zh="results/{panel}/synthetic/texts_zh.parquet",
        cs="results/{panel}/synthetic/texts_cs.parquet",
    params:
        panel=panel_config,
    log:
        "results/{panel}/logs/simulate_judge_ls.log",
    resources:
        mem_mb=2000,
        runtime=10,
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
    params:
        panel=panel_config,
        settings=config["judge_ls"],
    log:
        "results/{panel}/logs/judge_ls.log",
    benchmark:
        "results/{panel}/benchmarks/judge_ls.tsv"
    resources:
        mem_mb=4000,
        runtime=20,
    script:
        "../workflow_scripts/judge_ls.py"


register_targets(
    lambda: [
        f"results/{name}/judge_ls/summary.md"
        for name, panel in PANELS.items()
        if panel["kind"] == "pairwise_verdicts" and "judge_ls" in panel["analyses"]
    ]
)
