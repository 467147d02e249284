# Input functions and settings of card.smk (Snakemake's linter keeps functions out of files
# with rules); card.smk includes this file first.


def card_targets():
    return expand(
        "results/{panel}/card/{name}",
        panel=panels_with("card"),
        name=["agreement.csv", "language_tests.csv"],
    )


def card_reference(wildcards):
    """The panel's reference file under data_dir, if it names one."""
    reference = PANELS[wildcards.panel].get("reference_labels")
    return {"reference": data_input(reference["file"])} if reference else {}
