# Input functions and settings of card.smk (Snakemake's linter keeps functions out of files
# with rules); card.smk includes this file first.


def card_panels():
    """Panels that list `card`: requirement verdicts, preference margins, pairwise verdicts."""
    return [name for name, panel in PANELS.items() if "card" in panel["analyses"]]


def card_targets():
    return expand(
        "results/{panel}/card/{name}",
        panel=card_panels(),
        name=[
            "agreement.csv",
            "language_tests.csv",
            "bias.csv",
            "bias_tests.csv",
            "redundancy.csv",
            "ranking.csv",
        ],
    )


def card_inputs(wildcards):
    """A pairwise panel's judgments (from rule judge_ls) and its items' texts (for the length
    bias), or a score panel's requirement verdicts and its reference labels."""
    panel = PANELS[wildcards.panel]
    if panel["kind"] == "pairwise_verdicts":
        inputs = {"choices": f"results/{wildcards.panel}/judge_ls/choices.parquet"}
        if panel["card_bias"]["texts"]:
            inputs["texts"] = data_input(panel["card_bias"]["texts"])
        return inputs
    if panel["kind"] == "preference_margins":
        return {"runs": f"results/{wildcards.panel}/runs.parquet"}
    inputs = {"requirements": f"results/{wildcards.panel}/requirements.parquet"}
    reference = panel.get("reference_labels")
    if reference:
        inputs["reference"] = data_input(reference["file"])
    return inputs
