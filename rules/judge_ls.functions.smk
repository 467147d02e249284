# Input functions and settings of judge_ls.smk (Snakemake's linter keeps functions out of
# files with rules); judge_ls.smk includes this file first.


def judge_ls_inputs(wildcards):
    panel = PANELS[wildcards.panel]
    if panel["source"] == "collection":
        return collected_verdict_inputs(wildcards.panel)
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
    inputs = {"verdicts": source_input(panel["verdicts"])}
    if panel["reference_texts"]:
        inputs["reference_texts"] = data_input(panel["reference_texts"])
        for condition, variant in panel["variant_texts"].items():
            inputs[f"variant_{condition}"] = data_input(variant["path"])
    return inputs


def judge_ls_targets():
    return expand("results/{panel}/judge_ls/summary.md", panel=verdict_panels())
