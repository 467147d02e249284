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


def calibrator_path(value):
    """A `calibrator:` path: as given if it exists, else under data_dir (None: neither)."""
    for path in (Path(value), DATA_DIR / value):
        if path.is_file():
            return path
    return None


def calibrator_file(name):
    """The calibrator.json panel ``name`` applies: another panel's, or a file."""
    value = PANELS[name]["calibrator"]
    if value in PANELS:
        return f"results/{value}/cbc/calibrator.json"
    return local(str(calibrator_path(value)))


def link_problems(name):
    """What is wrong with panel ``name``'s `calibrator:` and `extends:` (list of lines)."""
    panel = PANELS[name]
    value, base = panel.get("calibrator"), panel.get("extends")
    problems = []
    if value and base:
        problems.append("sets both `calibrator` and `extends`: use one")
    if value in PANELS:
        if value == name:
            problems.append("`calibrator` names the panel itself")
        elif PANELS[value]["kind"] not in TENSOR_KINDS:
            problems.append(f"`calibrator`: panel '{value}' has no score tensor to fit")
    elif value:
        path = calibrator_path(value)
        if path is None:
            problems.append(
                f"`calibrator: {value}` is neither a panel of this config "
                f"({', '.join(PANELS)}) nor a file (looked for {Path(value)} and "
                f"{DATA_DIR / value})"
            )
        else:
            from polyjudge.calibrator import Calibrator
            from polyjudge.data.errors import InputError

            try:
                Calibrator.load(path)
            except InputError as error:
                message = str(error).replace("\n", "\n    ")
                problems.append(f"`calibrator`: {message}")
    if base and base not in PANELS:
        problems.append(
            f"`extends: {base}` is not a panel of this config ({', '.join(PANELS)})"
        )
    elif base == name:
        problems.append("`extends` names the panel itself")
    elif base:
        if panel["kind"] != "judge_runs":
            problems.append(
                "`extends` needs a judge_runs panel (the new judges' run table)"
            )
        if PANELS[base]["kind"] not in TENSOR_KINDS:
            problems.append(f"`extends`: panel '{base}' has no score tensor")
        if PANELS[base].get("extends"):
            problems.append(
                f"`extends`: panel '{base}' extends '{PANELS[base]['extends']}' itself; "
                f"extend '{PANELS[base]['extends']}' with all the new judges in one table"
            )
    return problems


def check_links():
    """Stop at start-up, naming the panel, if a `calibrator:` or `extends:` is unusable."""
    problems = [
        f"  panel '{name}': {problem}"
        for name in PANELS
        for problem in link_problems(name)
    ]
    if problems:
        raise ValueError(
            "the config's panels cannot apply or extend as asked (nothing was run):\n"
            + "\n".join(problems)
        )
