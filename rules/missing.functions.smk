# Input functions and settings of missing.smk (Snakemake's linter keeps functions out of
# files with rules); missing.smk includes this file first.


def panels_omitting_missing():
    """Tensor panels whose cells may be missing (`missing: omit`): they get the missingness
    check."""
    return [
        name
        for name, panel in PANELS.items()
        if panel["kind"] in TENSOR_KINDS and panel.get("missing") == "omit"
    ]


def missing_targets():
    return (
        expand(
            "results/{panel}/missing/mnar_check.csv", panel=panels_omitting_missing()
        )
        + expand("results/{panel}/missing/mae.csv", panel=panels_with("missing"))
        + expand(
            "results/{panel}/missing/parse_failures.csv",
            panel=panels_with("parse_failures"),
        )
    )
