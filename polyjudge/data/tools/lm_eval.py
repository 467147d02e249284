"""lm-evaluation-harness: the ``samples_<task>_<time>.jsonl`` files ``lm_eval ... --output_path
out --log_samples`` writes, one record per document, beside the run's ``results_<time>.json``.

============  ==================================================================================
task          the record's ``doc_id`` (the same document in every language of a parallel
              benchmark: ``xnli_de`` and ``xnli_en`` share ids); ``<benchmark>:<doc_id>``
              where the files hold several benchmarks (the task name without its language)
language      the task name's language (``xnli_de``: ``de``; ``belebele_deu_Latn``:
              ``deu_Latn``; ``mgsm_native_cot_bn``: ``bn``), else the source's ``constants``
backbone      ``judge:`` (default ``metric``: the metric scored the answer, no model judged)
framework     ``system:`` (default ``model``: the evaluated model, the results file's
              ``model_name``, else its ``model_args`` ``pretrained=`` / ``model=``)
score         the record's value of ``metric:`` (default: the only metric the records hold)
stratum       the benchmark, where the files hold several
============  ==================================================================================

The fields ``judge:`` and ``system:`` may name: ``model``, ``metric``, ``task`` (the lm-eval
task name), ``filter`` (the filter whose response was scored), or ``=<label>``; ``system:
none`` gives no framework column. A metric that lm-eval aggregates over the whole corpus (a
span F1, BLEU: each record holds the reference and the prediction, not a number) is refused:
it has no score per document.
"""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from ..errors import InputError
from .choices import choice, json_lines, labels, language_of, only_runs, read_json

OPTIONS = ("metric", "filter", "judge", "system")
FIELDS = ("model", "metric", "task", "filter")
SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<time>\d{4}-\d{2}-\d{2}T[\d.-]+)\.jsonl$")
RECORD_KEYS = {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter",
               "metrics", "doc_hash", "prompt_hash", "target_hash"}
"""Keys of a sample record that are not metrics (lm-eval 0.4)."""
WHAT = "an lm-evaluation-harness samples_<task>_<time>.jsonl file (lm_eval --log_samples)"


def read(files, *, table: str = "runs", missing: str = "error", metric: str | None = None,
         filter: str | None = None, judge: str = "metric", system: str = "model"
         ) -> pd.DataFrame:
    """The runs of lm-eval sample files (module docstring: which field gives which column).

    ``files``: the source's files; its ``samples_*.jsonl`` are read, each with the
    ``results_<time>.json`` of the same run beside it (its model and task configuration).
    ``metric``: the per-document metric that is the score, where the records hold several
    (``acc`` and ``acc_norm``); ``filter``: the filter whose scores are read, where a task has
    several (``strict-match`` and ``flexible-extract``). Raises
    :class:`~polyjudge.data.errors.InputError` naming the file and field for: no sample files,
    a file of another tool, a field that is missing or ambiguous, a metric with no value per
    document."""
    only_runs(table, "lm_eval")
    source = ", ".join(map(str, files)) if len(files) <= 3 else f"{Path(files[0]).parent} (...)"
    judge = choice("judge", judge, FIELDS, source)
    system = choice("system", system, FIELDS, source, allow_none=True)
    samples = [Path(f) for f in files if SAMPLES.match(Path(f).name)]
    if not samples:
        shown = ", ".join(Path(f).name for f in files[:3])
        raise InputError(source, f"holds no lm-eval sample file (found {shown})",
                         f"{WHAT}: run lm_eval with --log_samples, and point `path` at the "
                         "folder it wrote (--output_path)")
    parts = [_read_samples(path, metric, filter) for path in samples]
    frame = pd.concat(parts, ignore_index=True)
    fields = {"model": frame["model"], "metric": frame["metric"], "task": frame["lm_task"],
              "filter": frame["filter"]}
    for name, value in (("judge", judge), ("system", system)):
        if value == "model" and frame["model"].isna().any():
            where = sorted(frame.loc[frame["model"].isna(), "file"].unique())[:3]
            raise InputError(", ".join(where), f"`{name}: model`, but no results_<time>.json "
                             "beside these sample files names the model",
                             f"the results file lm_eval wrote beside them, or `{name}: "
                             "=<model name>`")
    several = frame["benchmark"].nunique() > 1
    items = frame["benchmark"] + ":" + frame["doc_id"] if several else frame["doc_id"]
    runs = pd.DataFrame({"task": items, "language": frame["language"],
                         "backbone": labels(judge, fields, len(frame))})
    framework = labels(system, fields, len(frame))
    if framework is not None:
        runs["framework"] = list(framework)
    runs["score"] = frame["score"].astype(float)
    if several:
        runs["stratum"] = frame["benchmark"]
    return runs


def _read_samples(path: Path, metric: str | None, filter: str | None) -> pd.DataFrame:
    task, time = SAMPLES.match(path.name).group("task", "time")
    results = _results(path, time)
    config = (results.get("configs") or {}).get(task) or {}
    records = list(json_lines(path, WHAT))
    if not records or "doc_id" not in records[0][1]:
        raise InputError(path, "has no `doc_id` field: not a file lm-eval wrote with "
                         "--log_samples", WHAT)
    filters = sorted({str(r.get("filter", "none")) for _, r in records})
    if len(filters) > 1 and filter is None:
        raise InputError(path, f"field `filter` holds {len(filters)} filters {filters}: each "
                         "document is scored once per filter", f"`filter: {filters[0]}` (the "
                         "filter whose answers to read) in the source")
    if filter is not None:
        if filter not in filters and any("filter" in r for _, r in records):
            raise InputError(path, f"no filter '{filter}'; the records' filters are {filters}",
                             "`filter` naming one of them")
        records = [(n, r) for n, r in records if str(r.get("filter", filter)) == filter]
    chosen = _metric(path, records, metric)
    rows = []
    for number, record in records:
        value = record.get(chosen)
        if isinstance(value, bool):
            value = float(value)
        if not isinstance(value, (int, float)):
            raise InputError(f"{path}:{number}", f"metric `{chosen}` is {_brief(value)}, not a "
                             "number: lm-eval aggregates it over the whole corpus, so it has "
                             "no score per document", "a metric with a number per document "
                             "(acc, exact_match, ...): `metric: <name>`")
        rows.append({"doc_id": str(record["doc_id"]), "score": float(value),
                     "filter": str(record.get("filter", filter or _filter(results, task))),
                     "metric": chosen})
    frame = pd.DataFrame(rows)
    frame["file"] = str(path)
    frame["lm_task"] = task
    frame["model"] = _model(results)
    frame["language"] = language = language_of(task, config.get("dataset_name"))
    frame["benchmark"] = _benchmark(task, language)
    return frame


def _benchmark(task: str, language: str | None) -> str:
    """The task name without its language (``xnli_de`` -> ``xnli``): the same benchmark in
    every language, so its documents are the same items."""
    if language is None:
        return task
    parts, drop = task.split("_"), language.split("_")
    for start in range(len(parts) - len(drop), -1, -1):
        if parts[start:start + len(drop)] == drop:
            return "_".join(parts[:start] + parts[start + len(drop):]) or task
    return task


def _results(samples: Path, time: str) -> dict:
    """The results file of the same run (same time), or {} when there is none."""
    path = samples.with_name(f"results_{time}.json")
    if not path.is_file():
        return {}
    results = read_json(path, "the results_<time>.json lm_eval writes beside its samples")
    if not isinstance(results, dict) or "results" not in results:
        raise InputError(path, "has no `results` field: not an lm-eval results file",
                         "the results_<time>.json lm_eval writes beside its samples")
    return results


def _model(results: dict) -> str | None:
    name = results.get("model_name")
    if name:
        return str(name)
    args = (results.get("config") or {}).get("model_args") or ""
    if isinstance(args, dict):
        return str(args.get("pretrained") or args.get("model") or "") or None
    found = re.search(r"(?:^|,)\s*(?:pretrained|model)=([^,]+)", str(args))
    return found.group(1).strip() if found else None


def _filter(results: dict, task: str) -> str:
    """The filter of a task whose records do not name it (lm-eval before 0.4.3): the one in its
    results' keys (``exact_match,get-answer``)."""
    keys = [key for key in (results.get("results") or {}).get(task, {}) if "," in key]
    found = {key.partition(",")[2] for key in keys if "_stderr" not in key}
    return found.pop() if len(found) == 1 else "none"


def _metric(path: Path, records, metric: str | None) -> str:
    named = records[0][1].get("metrics")
    found = sorted(named) if isinstance(named, list) else sorted(
        key for key, value in records[0][1].items() if key not in RECORD_KEYS
        and isinstance(value, (bool, int, float, list)))  # metrics: numbers, or corpus pairs
    if metric is not None:
        if not any(metric in r for _, r in records):
            raise InputError(path, f"no metric `{metric}`; the records' metrics are {found}",
                             "`metric` naming one of them")
        return metric
    if len(found) == 1:
        return found[0]
    if not found:
        raise InputError(path, "the records hold no metric field", WHAT)
    raise InputError(path, f"the records hold {len(found)} metrics {found}: which one is the "
                     "score is ambiguous", f"`metric: {found[0]}` (or another of them) in the "
                     "source")


def _brief(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
