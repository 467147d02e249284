# Input functions and settings of calibrate.smk (Snakemake's linter keeps functions out of
# files with rules); calibrate.smk includes this file first.


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
