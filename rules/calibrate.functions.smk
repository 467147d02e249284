# Input functions and settings of calibrate.smk (Snakemake's linter keeps functions out of
# files with rules); calibrate.smk includes this file first.
from polyjudge.workflow_config import calibrator_path


def calibrator_band(wildcards):
    """The `bands` settings when the panel lists `bands` (its calibrator then carries the
    band), else None (no band)."""
    if "bands" in PANELS[wildcards.panel]["analyses"]:
        return config["bands"]
    return None


def applied_calibrator(wildcards):
    return calibrator_file(wildcards.panel)


def extension_inputs(wildcards):
    """The combined panel's tensor and beta beside its base panel's beta."""
    base = PANELS[wildcards.panel]["extends"]
    return {
        "tensor": f"results/{wildcards.panel}/tensor.parquet",
        "beta": f"results/{wildcards.panel}/cbc/beta.csv",
        "base_beta": f"results/{base}/cbc/beta.csv",
    }


def calibrator_file(name):
    """The calibrator.json panel ``name`` applies: another panel's, or a file."""
    value = PANELS[name]["calibrator"]
    if value in PANELS:
        return f"results/{value}/cbc/calibrator.json"
    return local(str(calibrator_path(value, DATA_DIR)))


def calibrate_targets():
    """The CBC outputs, the applied calibrations, the extensions and the bands."""
    return (
        expand(
            "results/{panel}/cbc/{name}",
            panel=panels_with("cbc"),
            name=[
                "beta.csv",
                "rankings.csv",
                "summary.json",
                "calibrator.json",
                "leaderboard.csv",
            ],
        )
        + expand(
            "results/{panel}/applied/{name}",
            panel=applying_panels(),
            name=["runs.parquet", "rankings.csv", "summary.json"],
        )
        + expand(
            "results/{panel}/extend/{name}",
            panel=extending_panels(),
            name=["new_judge.csv", "beta_shift.csv", "summary.json"],
        )
        + expand("results/{panel}/cbc/bands.csv", panel=panels_with("bands"))
    )
