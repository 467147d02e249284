# Input functions, target lists and wildcard constraints shared by every stage.
import sys
from pathlib import Path

from polyjudge.data.errors import InputError
from polyjudge.data.yamlfile import read_yaml
from polyjudge.workflow_config import TENSOR_KINDS, ConfigError, check, complete


def workflow_yaml(relative):
    """One of the workflow's own YAML files (relative to rules/); one that does not parse
    (config/config.yaml edited by hand) prints its message alone, naming the file and line, and
    exits 1, as a config no run can use does."""
    try:
        return read_yaml(
            workflow.source_path(relative),
            name=Path(workflow.current_basedir, relative).resolve(),
        )
    except InputError as error:
        sys.exit(str(error))


def find_data_dir(value):
    """data_dir as given if absolute or present in the working directory, else the folder of that
    name beside the Snakefile (so the default `data` is the repository's data/ with `-s`).
    """
    path = Path(value)
    beside = Path(workflow.basedir) / path
    if path.is_absolute() or path.exists() or not beside.exists():
        return path
    return beside


def checked(config, data_dir, schema):
    """polyjudge.workflow_config.check; a config no run can use prints its message alone and
    exits 1 (raised, Snakemake would frame it as "ValueError in file rules/common.smk" with
    traceback lines, as if the workflow were at fault, not the user's config). Problems at
    keys of the user's --configfile name its line."""
    try:
        return check(config, data_dir, schema, workflow.overwrite_configfiles)
    except ConfigError as error:
        sys.exit(str(error))


# The Snakefile has no `configfile:`, so `config` is what the user gave (--configfile, --config):
# config/config.yaml fills every setting left out, except collections such as `panels`, which the
# user's replace (polyjudge.workflow_config.complete). The same wherever snakemake runs from.
config.update(complete(config, workflow_yaml("../config/config.yaml")))
DATA_DIR = find_data_dir(config["data_dir"])
# Every problem (unknown keys, the schema, analyses, links, collections, stop targets) stops the
# run here, in one message, before any job; else the stop target of each collection in rounds.
STOP_TARGETS = checked(
    config, DATA_DIR, workflow_yaml("../config/schema/config.schema.yaml")
)
PANELS = config["panels"]


wildcard_constraints:
    panel="[A-Za-z][A-Za-z0-9_]*",
    scenario="[A-Za-z][A-Za-z0-9_]*",


# Panel settings that choose analyses rather than describe the data: left out of the params of
# the rules, so adding an analysis to a panel does not rerun its ingest or anything else.
ANALYSIS_KEYS = (
    "analyses",
    "heldout_methods",
    "verdict_threshold",
    "anchor_sample",
    "requirement_types",
    "incomplete_items",
    "human_labels",
)
# Keys only the rules that apply or extend a calibration read (they get them as params of their
# own); `extends` stays in a panel's config where it is set (ingest combines the runs).
CALIBRATION_KEYS = ("calibrator", "unseen", "extends")


def panel_config(wildcards):
    return {
        key: value
        for key, value in PANELS[wildcards.panel].items()
        if key not in ANALYSIS_KEYS
        and not (key in CALIBRATION_KEYS and (key != "extends" or value is None))
    }


def panels_with(analysis):
    """Names of tensor panels whose config lists ``analysis``."""
    return [
        name
        for name, panel in PANELS.items()
        if panel["kind"] in TENSOR_KINDS and analysis in panel["analyses"]
    ]


def verdict_panels():
    """Names of pairwise-verdict panels that run the Judge-LS protocol."""
    return [
        name
        for name, panel in PANELS.items()
        if panel["kind"] == "pairwise_verdicts" and "judge_ls" in panel["analyses"]
    ]


def applying_panels():
    """Names of panels that apply a calibrator (`calibrator:`) instead of fitting one."""
    return [name for name, panel in PANELS.items() if panel.get("calibrator")]


def extending_panels():
    """Names of panels that add judges to another panel (`extends:`)."""
    return [name for name, panel in PANELS.items() if panel.get("extends")]


def data_path(relative):
    return str(DATA_DIR / relative)


def data_input(relative):
    """An input file under data_dir; local() keeps a module's prefix off it (not an output)."""
    return local(data_path(relative))


def all_targets():
    """The final outputs of every stage, for the target of `all`: each stage's
    `<stage>_targets()`, defined in its rules/<stage>.functions.smk."""
    stages = (
        card_targets,
        labels_targets,
        label_plan_targets,
        calibrate_targets,
        heldout_targets,
        reversal_targets,
        information_targets,
        external_targets,
        ablations_targets,
        missing_targets,
        diagnostics_targets,
        collection_targets,
        judge_ls_targets,
        simulation_targets,
    )
    return [path for stage in stages for path in stage()]


# --- Resources that follow the input (docs/performance.md, "Declared resources") -------------
# Heavy rules declare `mem_mb=scaled(base, per_million)` and `runtime=scaled(...)`: the request
# is (base + per_million x rows of its input / 10^6) x RESOURCE_MARGIN, times the attempt, so a job
# killed for memory and retried (`retries:` in profiles/slurm) asks for twice, then three times
# as much. base / per_million are fitted to the peaks of benchmarks/analyses_scale.py.
RESOURCE_MARGIN = 1.5


def input_rows(input, names=None):
    """Rows of a job's input files (named `names`, default all): a Parquet file's row count
    from its footer, other files (CSV, JSON Lines) one row per 16 bytes (an upper bound).
    """
    import pyarrow.parquet

    rows = 0
    for name in names or input.keys():
        if name not in input.keys():
            continue
        paths = input[name]
        for path in map(Path, [paths] if isinstance(paths, str) else paths):
            if path.suffix == ".parquet" and path.is_file():
                rows += pyarrow.parquet.read_metadata(path).num_rows
            elif path.is_file():
                rows += path.stat().st_size // 16
            elif path.is_dir():
                rows += (
                    sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) // 16
                )
    return rows


def scaled(base, per_million=0, of=None):
    """A resource callable:
    (base + per_million * input_rows(input, of) / 1e6) * margin * attempt."""

    def request(wildcards, input, attempt):
        rows = input_rows(input, of) if per_million else 0
        return int(
            -(-(base + per_million * rows / 1e6) * RESOURCE_MARGIN * attempt // 1)
        )

    return request
