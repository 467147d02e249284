"""Validate a panel's raw inputs: the standard run table, the task-level tensor (framework
means) and the cell-mean matrix, each its own file under results/{panel}/.

A run table given alone is streamed (polyjudge.data.streaming: bounded memory whatever its length),
from one file or from a source of many (polyjudge.data.sources: a folder, glob or list, fields from
the paths, JSON Lines);
tables derived from requirement verdicts or preference files are built in memory first. Either
way the runs pass the same checks and give the sufficient statistics of the tensor and of the
run-level R^2 models, recorded in inputs.json for the cbc step.
"""
import json
import logging
from pathlib import Path

import numpy as np
import pandas as pd

from polyjudge.analyses import extension
from polyjudge.cbc import estimator
from polyjudge.data import factors, io, shape, sources, streaming
from polyjudge.data.checksums import input_files
from polyjudge.data.errors import InputError
from polyjudge.judges.diagnosis import missing_scores_note
from polyjudge.scripting import run_step, write_csv, write_json, write_parquet

log = logging.getLogger("polyjudge.ingest")


def source_of(panel, inputs, name):
    """What the panel's config names (a judge_runs table source) or the file another rule
    wrote (synthetic, judgment_tree), and how messages name it."""
    value = panel[name] if panel["kind"] == "judge_runs" else inputs[name]
    files = inputs[name]
    return value, files, files if isinstance(files, str) else sources.describe(value)


def runs_in_memory(panel, inputs, data_dir=None):
    """Run table of a panel built from requirement verdicts or preference files, and its source."""
    if panel["kind"] == "preference_margins":
        return io.load_preference_margins(inputs, source_dir="."), ", ".join(inputs.values())
    columns = panel.get("columns") or {}
    runs = None
    if "runs" in inputs:
        value, files, runs_source = source_of(panel, inputs, "runs")
        runs = sources.read_source(value, files, columns, missing=panel["missing"], table="runs",
                                   base_dir=data_dir)
    value, files, source = source_of(panel, inputs, "requirements")
    table = sources.read_source(value, files, columns, fields=sources.REQUIREMENT_FIELDS,
                                base_dir=data_dir)
    recomputed = io.runs_from_requirements(table, source, columns)
    log.info("recomputed %d run scores from %d requirement verdicts", len(recomputed), len(table))
    if runs is None:
        return recomputed, source
    checked = io.validate_runs(runs, runs_source, panel["score_range"], panel["missing"],
                               mapping=columns)
    io.check_runs_agree(checked, recomputed, runs_source, mapping=columns)
    log.info("run table agrees with the requirement table")
    return runs, runs_source


def extended_runs(panel, inputs, data_dir=None):
    """The base panel's validated runs plus the new judges' (checked alone first, so an error
    names their file and rows), and the axis orders: the base's, new backbones last."""
    own = {k: v for k, v in inputs.items() if k in ("runs", "requirements")}
    if set(own) == {"runs"}:
        value, files, source = source_of(panel, own, "runs")
        new = sources.read_source(value, files, panel.get("columns") or {},
                                  missing=panel["missing"], table="runs", base_dir=data_dir)
    else:
        new, source = runs_in_memory(panel, own, data_dir)
    new = io.validate_runs(new, source, panel["score_range"], panel["missing"],
                           mapping=panel.get("columns") or {})
    base = io.read_table(inputs["base_runs"])
    runs = extension.extend_runs(base, new, panel["extends"], source)
    cells = io.read_table(inputs["base_cells"])
    languages = panel.get("languages") or list(pd.unique(cells["language"]))
    backbones = panel.get("backbones") or extension.backbone_order(
        pd.unique(cells["backbone"]), new["backbone"].unique())
    log.info("panel '%s' (%d runs) + %d runs of %s from %s", panel["extends"], len(base),
             len(new), sorted(new["backbone"].astype(str).unique()), source)
    return runs, f"{source} + panel '{panel['extends']}'", languages, backbones


PROVENANCE_ONLY = ("judgments", "base_manifest")
"""Inputs ingest does not read, only names in inputs.json (rules/ingest.functions.smk)."""


def provenance(panel, inputs):
    """The ``files`` of inputs.json and how a panel without any was made: the files in data
    (or the user's own) the panel was read from, not the workflow's intermediates. A judgment
    tree lists its JSON files, not their flattened table; a synthetic panel has no input file,
    its seed says how it was made; a panel that extends another adds that panel's files."""
    if panel["kind"] == "synthetic":
        return {}, {"rule": "simulate_panel", "seed": panel.get("seed")}
    intermediates = {"base_runs", "base_cells", "base_manifest"}  # of an extended panel
    if panel["kind"] == "judgment_tree":
        intermediates.add("requirements")  # the flattened table of the JSON files listed
    files = input_files({k: v for k, v in inputs.items() if k not in intermediates})
    simulated = None
    if "base_manifest" in inputs:
        base = json.loads(Path(inputs["base_manifest"]).read_text(encoding="utf-8"))
        files.update({f"{name} (panel {panel['extends']})": entry
                      for name, entry in base["files"].items()})
        simulated = base.get("simulated")
    return files, simulated


def panel_shape(tensor, frameworks, name, listed, source):
    """shape.json: the panel's size and, for every analysis, why its shape does not allow it
    (null: it does). Every analysis, not only those listed: the list is read from the config,
    not a param, so adding an analysis does not rerun the ingest (nor make this file stale).
    The analyses listed that cannot run are logged here, with what still runs; each also
    writes a skipped result naming why (polyjudge.scripting.run_step). So is what the listed
    analyses do with the factors beyond language x judge (frameworks, strata)."""
    n_runs = tensor.n_runs
    reasons = shape.analysis_reasons(n_runs, tensor.tasks, tensor.languages, tensor.backbones)
    for line in shape.skipped_summary(name, {a: reasons[a] for a in listed if a in reasons},
                                      source):
        log.warning(line)
    uses = factors.factor_uses(frameworks, tensor.strata)
    for line in factors.factor_lines(name, uses, listed):
        log.info(line)
    return {"panel": name, "n_tasks": len(tensor.tasks), "languages": list(tensor.languages),
            "backbones": list(tensor.backbones),
            "runs_per_cell": {"fewest": int(np.min(n_runs)), "most": int(np.max(n_runs))},
            "analyses": reasons, "factors": uses}


def main(smk):
    panel = smk.params.panel
    every = dict(smk.input.items())
    inputs = {k: v for k, v in every.items() if k not in PROVENANCE_ONLY}
    checks = dict(score_range=panel["score_range"], missing=panel["missing"],
                  runs_out=smk.output.runs)
    languages, backbones = panel.get("languages"), panel.get("backbones")
    # the user's column names, which messages name (a judge_runs panel's own tables)
    mapping = (panel.get("columns") or {}) if panel["kind"] == "judge_runs" else None
    if panel.get("extends"):
        runs, source, languages, backbones = extended_runs(panel, inputs, smk.params.data_dir)
        stats = streaming.scan_runs(lambda: [runs], source, **checks, mapping=mapping)
    elif panel["kind"] != "preference_margins" and set(inputs) == {"runs"}:
        value, files, source = source_of(panel, inputs, "runs")
        stats = sources.scan_source(value, files, panel.get("columns") or {}, **checks,
                                    base_dir=smk.params.data_dir)
    else:
        runs, source = runs_in_memory(panel, inputs, smk.params.data_dir)
        stats = streaming.scan_runs(lambda: [runs.reset_index(drop=True)], source, **checks,
                                    mapping=mapping)
    try:
        tensor = stats.panel(languages, backbones,
                             allow_missing_cells=panel["missing"] == "omit")
    except InputError:
        Path(smk.output.runs).unlink(missing_ok=True)  # no partial output
        raise
    log.info("%d runs: %d tasks x %d languages x %d backbones, %d empty cells", stats.n_runs,
             *tensor.shape, int((tensor.n_runs == 0).sum()))
    model = stats.model_stats()
    write_parquet(tensor.to_frame(), smk.output.tensor)
    write_csv(tensor.matrix_frame(tensor.cell_means(), "mean"), smk.output.cell_means)
    write_json(panel_shape(tensor, stats.labels["framework"], smk.wildcards.panel,
                           smk.config["panels"][smk.wildcards.panel]["analyses"], source),
               smk.output.shape)
    files, simulated = provenance(panel, every)
    write_json({"kind": panel["kind"], "n_runs": stats.n_runs,
                "r2_two_way": estimator.r_squared_from_stats(**model, full=False),
                "r2_full": estimator.r_squared_from_stats(**model, full=True),
                "files": files, **({"simulated": simulated} if simulated else {})},
               smk.output.manifest)


def main_naming_collection_failures(smk):
    """``main``, with the calls behind a collected panel's missing scores named in the log and
    in any error (the ingest's own message only sees missing values)."""
    panel = smk.params.panel
    note = None
    if panel["kind"] == "preference_margins" and panel.get("collect"):
        scores = {judge: pd.read_parquet(path) for judge, path in smk.input.items()}
        note = missing_scores_note(smk.wildcards.panel, scores, smk.config.get("endpoints") or {})
    if note:
        log.warning(note)
    try:
        main(smk)
    except ValueError as error:
        if note is None:
            raise
        raise ValueError(f"{error}\n{note}") from None


run_step(main_naming_collection_failures, snakemake)
