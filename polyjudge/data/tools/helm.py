"""HELM: the run folders ``helm-run --suite <suite> ...`` writes under
``benchmark_output/runs/<suite>/``, one per run (``<scenario>:...,model=<model>``), each with
``run_spec.json`` (the scenario and the evaluated model), ``per_instance_stats.json`` (every
metric of every instance) and ``scenario_state.json`` (the requests, the answers and the
annotators' judgments).

============  ==================================================================================
task          the instance's ``instance_id``
language      the run spec's scenario argument ``language`` / ``lang`` / ``locale``, if any,
              else the source's ``constants``
backbone      the judge: in a scenario judged by annotators (LLM judges), the annotator's
              judge (HarmBench's ``gpt`` and ``claude``: the metrics ``harm_bench_gpt_score``,
              ``harm_bench_claude_score``); else ``judge:`` (default: the metric's name)
framework     ``system:`` (default ``model``: the run spec's evaluated model)
score         the instance's mean of the judge's metric (``metric:`` where no annotator tells)
============  ==================================================================================

A run folder's instance appears in ``per_instance_stats.json`` once per train trial and
perturbation; the unperturbed stats of train trial 0 are read (the ones HELM's leaderboard
shows). ``judge:`` and ``system:`` may name ``model``, ``metric``, ``scenario`` or
``=<label>``; ``system: none`` gives no framework column.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..errors import InputError
from .choices import choice, labels, only_runs, read_json

OPTIONS = ("metric", "judge", "system")
FIELDS = ("model", "metric", "scenario")
LANGUAGE_ARGS = ("language", "lang", "locale")
WHAT = ("a HELM run folder (run_spec.json, per_instance_stats.json, scenario_state.json), as "
        "helm-run writes under benchmark_output/runs/<suite>/")


def read(files, *, table: str = "runs", missing: str = "error", metric=None,
         judge: str = "metric", system: str = "model") -> pd.DataFrame:
    """The runs of HELM run folders (module docstring: which field gives which column).

    ``files``: the source's files; every folder holding a ``run_spec.json`` is a run.
    ``metric``: the metric (or a list of metrics, one judge each) whose per-instance mean is
    the score, where no annotator's judges tell. ``missing``: an instance without the metric
    stops the reading (``error``) or gives a missing score (``omit``). Raises
    :class:`~polyjudge.data.errors.InputError` naming the file and field for: no run folder, a
    folder without ``per_instance_stats.json``, an unknown or ambiguous metric."""
    only_runs(table, "helm")
    runs = sorted({Path(f).parent for f in files if Path(f).name == "run_spec.json"})
    source = ", ".join(map(str, files[:3])) + (" ..." if len(files) > 3 else "")
    if not runs:
        raise InputError(source, "holds no run_spec.json: no HELM run folder", WHAT)
    judge = choice("judge", judge, FIELDS, source)
    system = choice("system", system, FIELDS, source, allow_none=True)
    metrics = [metric] if isinstance(metric, str) else list(metric or [])
    frame = pd.concat([_read_run(folder, metrics, missing) for folder in runs],
                      ignore_index=True)
    fields = {"model": frame["model"], "metric": frame["metric"],
              "scenario": frame["scenario"]}
    backbone = frame["judge"].where(frame["judge"].notna(),
                                    pd.Series(labels(judge, fields, len(frame))))
    out = pd.DataFrame({"task": frame["instance"], "language": frame["language"],
                        "backbone": backbone})
    framework = labels(system, fields, len(frame))
    if framework is not None:
        out["framework"] = list(framework)
    out["score"] = frame["score"].astype(float)
    if frame["scenario"].nunique() > 1:
        out["stratum"] = frame["scenario"]
        out["task"] = frame["scenario"] + ":" + frame["instance"]
    return out


def _read_run(folder: Path, metrics: list, missing: str) -> pd.DataFrame:
    spec = read_json(folder / "run_spec.json", WHAT)
    adapter = spec.get("adapter_spec") if isinstance(spec, dict) else None
    if not isinstance(adapter, dict) or "scenario_spec" not in spec:
        raise InputError(folder / "run_spec.json", "has no `adapter_spec` / `scenario_spec`: "
                         "not a HELM run spec", WHAT)
    stats_path = folder / "per_instance_stats.json"
    if not stats_path.is_file():
        raise InputError(folder, "is a HELM run folder without per_instance_stats.json (the "
                         "scores of each instance)", "the whole run folder, as helm-run "
                         "writes it (per_instance_stats.json is written after the metrics)")
    stats = _instance_stats(stats_path)
    available = sorted({name for row in stats.values() for name in row})
    judges = _judges(folder, metrics, available)
    if not judges:
        raise InputError(stats_path, f"holds {len(available)} metrics and no annotator "
                         "names the judges, so which metric is the score is ambiguous",
                         f"`metric: <name>` in the source, one of {_shown(available)}")
    unknown = [m for m in judges if m not in available]
    if unknown:
        raise InputError(stats_path, f"no metric {unknown}", f"`metric` naming metrics of the "
                         f"file: {_shown(available)}")
    args = spec["scenario_spec"].get("args") or {}
    language = next((str(args[key]) for key in LANGUAGE_ARGS if args.get(key)), None)
    rows = []
    for instance, values in stats.items():
        for name, judge in judges.items():
            if name not in values and missing == "error":
                raise InputError(stats_path, f"instance '{instance}' has no metric `{name}`",
                                 "every instance scored (or `missing: omit` in the panel)")
            rows.append({"instance": instance, "metric": name, "judge": judge,
                         "score": values.get(name, float("nan"))})
    frame = pd.DataFrame(rows)
    frame["model"] = str(adapter.get("model") or adapter.get("model_deployment"))
    frame["scenario"] = str((spec.get("groups") or [None])[0] or spec["name"].partition(":")[0])
    frame["language"] = language
    return frame


def _instance_stats(path: Path) -> dict:
    """instance id -> {metric: mean}, unperturbed, train trial 0, merging HELM's entries."""
    entries = read_json(path, WHAT)
    if not isinstance(entries, list) or entries and not isinstance(entries[0], dict) or \
            any("instance_id" not in e or "stats" not in e for e in entries):
        raise InputError(path, "is not a list of {instance_id, stats}: not HELM's "
                         "per_instance_stats.json", WHAT)
    found: dict[str, dict] = {}
    for entry in entries:
        if entry.get("train_trial_index", 0) != 0 or entry.get("perturbation"):
            continue
        values = found.setdefault(str(entry["instance_id"]), {})
        for stat in entry["stats"]:
            name = stat.get("name") or {}
            if name.get("perturbation") or stat.get("mean") is None:
                continue
            values[str(name.get("name"))] = float(stat["mean"])
    if not found:
        raise InputError(path, "holds no unperturbed instance stats", WHAT)
    return found


def _judges(folder: Path, metrics: list, available: list) -> dict:
    """metric -> judge label: the metrics given (labelled later by ``judge:``), else the
    metrics ``<annotator>_<judge>_score`` of the annotators' ``<judge>_score`` judgments."""
    if metrics:
        return {str(m): None for m in metrics}
    path = folder / "scenario_state.json"
    if not path.is_file():
        return {}
    state = read_json(path, WHAT)
    judges = {}
    for request in (state.get("request_states") or [])[:50] if isinstance(state, dict) else []:
        for annotator, notes in (request.get("annotations") or {}).items():
            for key in notes if isinstance(notes, dict) else ():
                name = f"{annotator}_{key}"
                if key.endswith("_score") and name in available:
                    judges[name] = key[: -len("_score")]
    return dict(sorted(judges.items()))


def _shown(names: list) -> str:
    return ", ".join(names[:12]) + (f" and {len(names) - 12} more" if len(names) > 12 else "")
