"""Inspect AI eval logs as a judge panel: a long run table, or a Judge-LS verdict table.

Labs that run model-graded evaluations in `Inspect AI <https://inspect.aisi.org.uk>`_ keep every
sample's scores, the grader model and the sample metadata in the eval logs (``.eval`` or
``.json``). :func:`read_inspect_logs` reads them with Inspect's own log API (a log header with
``read_eval_log(header_only=True)``, the samples with ``read_eval_log_sample_summaries``; full
samples only for a log whose summaries shortened or lack a value the mapping reads, as the
summaries of older Inspect versions lack the sample metadata), so the log format stays
Inspect's to keep. ``inspect-ai`` is an optional dependency (``pip install -e ".[inspect]"``),
imported only inside the reader.

Each column of the table comes from a *field* of the sample or of its log:

=================  ==============================================================================
``id``             the sample id (as text)
``epoch``          the epoch (1, 2, ...; as text)
``target``         the sample's target (a list target is joined with ", ")
``task_name``      the Inspect task's name
``model``          the eval's model (the evaluated model)
``grader``         the model of the role ``grader_role`` when the eval has that role, else the
                   eval's model (the judge is the model under evaluation)
``metadata.<key>`` a key of the sample's metadata
``task_arg.<name>`` a task argument (``-T name=value``)
``=<text>``        the constant ``<text>`` (``"=original"``)
=================  ==============================================================================

Defaults: runs: task = ``id``, framework = ``epoch``, backbone = ``grader``, language =
``metadata.language``, score = the value of ``scorer``; verdicts: item = ``id``, subset =
``task_name``, judge = ``grader``, condition = ``metadata.language``, order = ``metadata.order``,
gold = ``target``, verdict = the value of ``verdict_scorer``. Scores are converted to numbers
with Inspect's own ``inspect_ai.scorer.value_to_float`` (letter grades C / P / I / N give 1, 0.5,
0, 0), after refusing the values it does not know (it would silently give 0.0).
"""
from __future__ import annotations

import glob
import math
from pathlib import Path

import pandas as pd

from .errors import InputError
from .io import RUN_KEYS

RUN_FIELDS = {"task": "id", "language": "metadata.language", "backbone": "grader",
              "framework": "epoch"}
"""Standard run column -> default field."""
VERDICT_FIELDS = {"item": "id", "subset": "task_name", "judge": "grader",
                  "condition": "metadata.language", "order": "metadata.order", "gold": "target"}
"""Judge-LS verdict column -> default field (the verdict itself is ``verdict_scorer``'s value)."""
RUN_COLUMNS = ["task", "language", "backbone", "framework", "score"]
VERDICT_COLUMNS = ["item", "subset", "judge", "condition", "order", "verdict", "gold"]
"""= :data:`polyjudge.analyses.judge_ls.verdicts.VERDICT_COLUMNS` (``data`` cannot import it)."""
FIELDS = ("id", "epoch", "target", "task_name", "model", "grader")
INSPECT_KEYS = ("inspect", "scorer", "verdict_scorer", "grader_role", "epoch",
                *RUN_FIELDS, *VERDICT_FIELDS)
"""Keys of an Inspect source mapping in the config: ``inspect`` (the logs) and the keywords of
:func:`read_inspect_logs`."""
INSTALL = ('pip install "inspect-ai==0.3.285" (or, in the polyjudge clone, '
           'pip install -e ".[inspect]")')
LOG_SUFFIXES = (".eval", ".json")
BOOKKEEPING = {"logs.json", "eval-set.json"}
"""JSON files Inspect writes beside the logs of an eval set (not logs)."""
SHORTENED = "Key removed from summary (> 1k)"


def inspect_log_files(logs, base_dir=None) -> list[Path]:
    """The log files ``logs`` names: a file, a folder (its ``*.eval`` and ``*.json`` files at any
    depth, except Inspect's ``logs.json`` / ``eval-set.json`` and hidden files), a glob, or a
    list of those; relative paths are taken under ``base_dir``. Sorted, each once. Needs no
    ``inspect_ai`` (the workflow lists a panel's inputs with it)."""
    entries = [logs] if isinstance(logs, (str, Path)) else list(logs)
    if not entries:
        raise InputError("inspect", "an empty list of logs", "a log file, a folder or a list")
    found: dict[Path, None] = {}
    for entry in entries:
        path = Path(base_dir, entry) if base_dir is not None else Path(entry)
        if any(char in str(entry) for char in "*?["):
            matches = [Path(p) for p in glob.glob(str(path), recursive=True)]
            matches = [p for p in matches if p.is_file()]
            if not matches:
                raise InputError(path, f"matches no file (looked for {path.absolute()})",
                                 "a pattern that matches Inspect logs (check the path and "
                                 "data_dir)")
        elif path.is_dir():
            matches = [p for p in path.rglob("*") if p.is_file()
                       and p.suffix in LOG_SUFFIXES and p.name not in BOOKKEEPING
                       and not any(part.startswith(".") for part in p.relative_to(path).parts)]
            if not matches:
                raise InputError(path, "is a folder with no Inspect logs (no .eval or .json "
                                 f"file at any depth under {path.resolve()})", "a folder "
                                 "holding Inspect eval logs (check the path and data_dir)")
        elif path.is_file():
            matches = [path]
        else:
            raise InputError(path, f"not found (looked for {path.resolve()})", "an Inspect log "
                             "file (.eval or .json) or a folder of logs (check the path and "
                             "data_dir)")
        found.update((p, None) for p in sorted(matches))
    return sorted(found)


def _import_inspect():
    try:
        from inspect_ai import __version__
        from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries
        from inspect_ai.scorer import CORRECT, INCORRECT, NOANSWER, PARTIAL, value_to_float
    except ImportError as error:
        raise InputError("polyjudge.read_inspect_logs", f"needs the optional dependency "
                         f"inspect-ai, which is not installed ({error})",
                         f"install it with: {INSTALL}") from None
    letters = {CORRECT: 1.0, PARTIAL: 0.5, INCORRECT: 0.0, NOANSWER: 0.0}
    return __version__, read_eval_log, read_eval_log_sample_summaries, value_to_float, letters


def _check_field(name: str, spec) -> str:
    spec = str(spec)
    if spec in FIELDS or spec.startswith("=") or (
            spec.partition(".")[0] in ("metadata", "task_arg") and spec.partition(".")[2]):
        return spec
    raise InputError("read_inspect_logs", f"`{name}: {spec}` is not a field of an Inspect "
                     "sample", f"one of {', '.join(FIELDS)}, metadata.<key>, task_arg.<name> "
                     "or =<text> (a constant)")


def read_inspect_logs(inspect, *, scorer: str | None = None, verdict_scorer: str | None = None,
                      task: str = "id", language: str = "metadata.language",
                      backbone: str = "grader", framework: str = "epoch", item: str = "id",
                      subset: str = "task_name", judge: str = "grader",
                      condition: str = "metadata.language", order: str = "metadata.order",
                      gold: str = "target", grader_role: str = "grader",
                      epoch: int | None = None, missing: str = "error",
                      table: str | None = None, base_dir=None) -> pd.DataFrame:
    """Inspect AI eval logs as a long run table (task, language, backbone, framework, score),
    or, with ``verdict_scorer``, as a Judge-LS verdict table (item, subset, judge, condition,
    order, verdict, gold).

    ``inspect``: the logs: a log file (``.eval`` or ``.json``, any name), a folder of logs, a
    glob, or a list of those (relative to ``base_dir``). Each column comes from a field (module
    docstring: ``id``, ``epoch``, ``target``, ``task_name``, ``model``, ``grader``,
    ``metadata.<key>``, ``task_arg.<name>``, ``=<text>``). ``scorer``: the scorer whose value is
    the score (default: the only scorer in the logs); values become numbers with Inspect's
    ``value_to_float`` (C / P / I / N -> 1 / 0.5 / 0 / 0, yes / no, numeric text), any other value
    is refused. ``verdict_scorer``: the scorer whose value is the preferred answer (A / B / Tie, as
    shown). ``epoch``: keep only that epoch (a verdict table takes one epoch). ``missing``: a
    sample that errored or has no value of the scorer stops the reading (``"error"``, naming the
    samples) or gives a missing score / an unparseable verdict (``"omit"``). ``table``: ``"runs"``
    or ``"verdicts"`` when the caller knows which it needs (the workflow), so a source that names
    the wrong scorer key says so; default: verdicts exactly when ``verdict_scorer`` is given.

    Raises :class:`~polyjudge.data.errors.InputError` naming the file and samples for: a missing
    ``inspect-ai``, no logs, a file that is not a log, two copies of one log, an unknown scorer
    (listing those found), a field missing in some samples, an unknown score value, a run given
    by two samples. Labels are text, scores floats; checks of the table itself (score range,
    balance) are those of every run table (:func:`polyjudge.data.io.validate_runs`).
    """
    version, read_log, read_summaries, value_to_float, letters = _import_inspect()
    if missing not in ("error", "omit"):
        raise ValueError(f"missing must be 'error' or 'omit', got {missing!r}")
    if table not in (None, "runs", "verdicts"):
        raise ValueError(f"table must be 'runs' or 'verdicts', got {table!r}")
    verdicts = verdict_scorer is not None if table is None else table == "verdicts"
    if (scorer is not None and verdicts) or (verdict_scorer is not None and not verdicts):
        raise InputError("read_inspect_logs", f"`{'scorer' if verdicts else 'verdict_scorer'}` "
                         f"given for a {'verdict' if verdicts else 'run'} table",
                         "scorer: the score of a run table (judge_runs panels); verdict_scorer: "
                         "the preferred answer of a verdict table (pairwise_verdicts panels)")
    if verdicts and verdict_scorer is None:
        raise InputError("read_inspect_logs", "a verdict table from Inspect logs without "
                         "`verdict_scorer`", "verdict_scorer: the scorer whose value is the "
                         "preferred answer (A, B or Tie)")
    fields = ({"item": item, "subset": subset, "judge": judge, "condition": condition,
               "order": order, "gold": gold} if verdicts else
              {"task": task, "language": language, "backbone": backbone, "framework": framework})
    fields = {name: _check_field(name, spec) for name, spec in fields.items()}
    files = inspect_log_files(inspect, base_dir)
    source = (", ".join(map(str, files)) if len(files) <= 3
              else f"{files[0].parent} ({len(files)} logs)")
    samples = pd.concat([_read_log(path, header, read_log, read_summaries, fields, grader_role,
                                   missing)
                         for path, header in _headers(files, read_log, version)],
                        ignore_index=True)
    if epoch is not None:
        samples = samples[samples["epoch"] == str(epoch)].reset_index(drop=True)
        if samples.empty:
            raise InputError(source, f"no samples of epoch {epoch}", "an epoch the logs have")
    epochs = sorted(samples["epoch"].unique(), key=int)
    if verdicts and len(epochs) > 1:
        raise InputError(source, f"samples of {len(epochs)} epochs {epochs}: each epoch "
                         "repeats every judgment", "one epoch for a verdict table: "
                         "`epoch: 1` (or run the pairwise eval with epochs=1)")
    wanted = _scorer(samples, source, verdict_scorer if verdicts else scorer)
    value = _values(samples, wanted, source, missing)
    frame = pd.DataFrame({name: _column(samples, name, spec, source)
                          for name, spec in fields.items()})
    if verdicts:
        frame["verdict"] = [_verdict_text(v) for v in value]
        return frame[VERDICT_COLUMNS]
    frame["score"] = _scores(value, samples, wanted, source, value_to_float, letters)
    _check_duplicates(frame, samples, source)
    return frame[RUN_COLUMNS]


def _headers(files: list[Path], read_log, version) -> list[tuple]:
    """Each file with its log header, checked to be a log and the only copy of its evaluation."""
    seen: dict[str, Path] = {}
    headers = []
    for path in files:
        header = _header(path, read_log, version)
        if header.eval.eval_id in seen:
            raise InputError(path, f"is a copy of {seen[header.eval.eval_id]}: both are logs of "
                             f"the same evaluation (eval_id {header.eval.eval_id})",
                             "each evaluation's log once (remove the copy, or the failed run "
                             "an eval-retry replaced)")
        seen[header.eval.eval_id] = path
        headers.append((path, header))
    return headers


def _header(path: Path, read_log, version):
    try:
        return read_log(str(path), header_only=True)
    except Exception as error:  # the reader's message says what is wrong with the file
        raise InputError(path, f"is not an Inspect log that inspect-ai {version} can read "
                         f"({type(error).__name__}: {_brief(error)})",
                         "an Inspect AI eval log (.eval or .json, as `inspect eval` writes it)")


def _read_log(path: Path, header, read_log, read_summaries, fields: dict, grader_role: str,
              missing: str) -> pd.DataFrame:
    """One row per sample of one log: file, id, epoch, error, scores and the mapped fields."""
    if header.status != "success" and missing == "error":
        reason = _error_text(header.error) or "no error"
        raise InputError(path, f"is the log of an evaluation that did not finish (status "
                         f"{header.status}: {reason})", "logs of finished evaluations (rerun "
                         "it with `inspect eval-retry`), or `missing: omit` to read the "
                         "samples it has")
    try:
        samples = read_summaries(str(path))
        if _shortened(samples, fields) or _lacking(samples, fields):  # the summaries do not
            samples = read_log(str(path)).samples or []  # hold what we read: full samples
    except Exception as error:
        raise InputError(path, f"is an Inspect log whose samples cannot be read "
                         f"({type(error).__name__}: {_brief(error)})",
                         "an intact Inspect eval log")
    spec = header.eval
    roles = spec.model_roles or {}
    grader = roles[grader_role].model if grader_role in roles else spec.model
    task_name = spec.task.rpartition("/")[2]
    rows = []
    for sample in samples:
        target = sample.target
        rows.append({"file": str(path), "id": str(sample.id), "epoch": str(sample.epoch),
                     "error": _error_text(sample.error), "scores": sample.scores or {},
                     "target": ", ".join(target) if isinstance(target, list) else target,
                     "task_name": task_name, "model": spec.model, "grader": grader,
                     **{f"f:{spec_}": _lookup(spec_, sample, spec.task_args or {})
                        for spec_ in fields.values() if spec_ not in FIELDS}})
    if not rows:
        raise InputError(path, "is an Inspect log without samples", "a log with scored samples")
    return pd.DataFrame(rows)


_ABSENT = object()


def _lookup(spec: str, sample, task_args: dict):
    if spec.startswith("="):
        return spec[1:]
    where, _, key = spec.partition(".")
    found = (sample.metadata or {}) if where == "metadata" else task_args
    return found.get(key, _ABSENT)


def _shortened(samples, fields: dict) -> bool:
    """Might a sample summary hold a value the mapping reads other than the sample does? Summaries
    pass metadata strings through ``textwrap.shorten`` (runs of spaces and newlines become one
    space, over 1k cut with "..."), drop large metadata values and cut targets over 5k."""
    keys = [spec.partition(".")[2] for spec in fields.values() if spec.startswith("metadata.")]
    for sample in samples:
        for key in keys:
            value = (sample.metadata or {}).get(key)
            if isinstance(value, str) and (" " in value or value.endswith("...")
                                           or value == SHORTENED):
                return True
        if "target" in fields.values():
            targets = sample.target if isinstance(sample.target, list) else [sample.target]
            if any(target.endswith("(content truncated)") for target in targets):
                return True
    return False


def _lacking(samples, fields: dict) -> bool:
    """Do summaries lack a metadata key the mapping reads? Logs of older Inspect versions keep
    every sample's metadata only in the full sample (their summaries' metadata is empty), so a
    key absent from a summary is looked for there before it is reported missing."""
    keys = [spec.partition(".")[2] for spec in fields.values() if spec.startswith("metadata.")]
    return any(key not in (sample.metadata or {}) for sample in samples for key in keys)


def _brief(error) -> str:
    """The first two lines of an error (a pydantic error: its count and the first field)."""
    lines = str(error).strip().splitlines()
    return " ".join(lines[:2]) if lines else ""


def _error_text(error) -> str:
    return _brief(getattr(error, "message", error)) if error else ""


def _column(samples: pd.DataFrame, name: str, spec: str, source) -> pd.Series:
    """The mapped field as text; a field some samples lack is an error naming them."""
    values = samples[spec] if spec in FIELDS else samples[f"f:{spec}"]
    absent = values.map(lambda v: v is _ABSENT or v is None)
    if absent.any():
        where = "task argument" if spec.startswith("task_arg.") else "sample metadata key"
        key = spec.partition(".")[2]
        raise InputError(source, f"{name} comes from the {where} '{key}', which "
                         f"{int(absent.sum())} of {len(samples)} sample(s) lack",
                         f"'{key}' in every sample (or map {name} to another field, e.g. "
                         f"{name}: task_arg.{key} or {name}: metadata.<key>)",
                         _sample_rows(samples, absent), rows_caption="samples",
                         n_rows=int(absent.sum()))
    return values.map(lambda v: str(v).strip()).astype(object)


def _sample_rows(samples: pd.DataFrame, mask, extra: dict | None = None) -> pd.DataFrame:
    rows = samples.loc[mask, ["file", "id", "epoch"]].assign(
        file=lambda f: f["file"].map(lambda p: Path(p).name))
    for name, values in (extra or {}).items():
        rows[name] = values[mask]
    return rows.reset_index(drop=True).rename(columns={"id": "sample"})


def _scorer(samples: pd.DataFrame, source, scorer: str | None) -> str:
    found = sorted({name for scores in samples["scores"] for name in scores})
    if scorer is None:
        if len(found) == 1:
            return found[0]
        raise InputError(source, f"the logs have {len(found)} scorers {found}",
                         "the scorer whose value is the score: `scorer: <name>`")
    if scorer not in found:
        raise InputError(source, f"no scorer '{scorer}'; the logs' scorers are {found}",
                         "`scorer` (or `verdict_scorer`) naming one of them")
    return scorer


def _values(samples: pd.DataFrame, scorer: str, source, missing: str) -> pd.Series:
    """The scorer's value per sample; samples that errored or lack it are reported."""
    present = samples["scores"].map(lambda s: scorer in s)
    failed = (samples["error"] != "") | ~present
    if failed.any() and missing == "error":
        errors = samples["error"].where(samples["error"] != "", f"no '{scorer}' score")
        raise InputError(source, f"{int(failed.sum())} sample(s) errored or have no "
                         f"'{scorer}' score", "every sample scored (rerun the errored ones "
                         "with `inspect eval-retry`), or `missing: omit` to leave them out",
                         _sample_rows(samples, failed, {"error": errors}),
                         rows_caption="samples", n_rows=int(failed.sum()))
    values = [None if bad else scores[scorer].value
              for scores, bad in zip(samples["scores"], failed)]
    return pd.Series(values, index=samples.index, dtype=object)  # as Inspect gave them


def _known(value, letters: dict) -> bool:
    """Does Inspect's value_to_float know the value (rather than warn and give 0.0)?"""
    if isinstance(value, bool | int | float):
        return True
    if not isinstance(value, str):
        return False
    if value in letters or value.lower() in ("yes", "true", "no", "false"):
        return True
    try:
        return math.isfinite(float(value))  # numeric text; "nan" and "inf" would give 0.0
    except ValueError:
        return False


def _scores(values: pd.Series, samples: pd.DataFrame, scorer: str, source, value_to_float,
            letters) -> pd.Series:
    present = values.notna()
    unknown = present & ~values.map(lambda v: _known(v, letters))
    if unknown.any():
        shown = sorted({repr(v) for v in values[unknown]})[:10]
        raise InputError(source, f"{int(unknown.sum())} '{scorer}' value(s) that Inspect "
                         f"cannot turn into a number: {', '.join(shown)}",
                         "numbers, letter grades C / P / I / N (1, 0.5, 0, 0), yes / no / "
                         "true / false or numeric text (inspect_ai.scorer.value_to_float)",
                         _sample_rows(samples, unknown, {"value": values.map(repr)}),
                         rows_caption="samples", n_rows=int(unknown.sum()))
    to_float = value_to_float()
    return pd.Series([to_float(v) if v is not None else float("nan") for v in values],
                     index=values.index, dtype=float)


def _verdict_text(value) -> str:
    if value is None or isinstance(value, (dict, list)):
        return ""
    return str(value).strip()


def _check_duplicates(table: pd.DataFrame, samples: pd.DataFrame, source) -> None:
    duplicated = table.duplicated(RUN_KEYS, keep=False)
    if duplicated.any():
        files = sorted(samples.loc[duplicated, "file"].unique())
        rows = pd.concat([_sample_rows(samples, duplicated), table.loc[duplicated, RUN_KEYS]
                          .reset_index(drop=True)], axis=1).sort_values(RUN_KEYS)
        raise InputError(source, f"{int(duplicated.sum())} samples give the same run "
                         f"{tuple(RUN_KEYS)}, in {', '.join(files)}",
                         "one sample per run: remove repeated logs, or map the columns to "
                         "fields that tell the runs apart", rows, rows_caption="samples",
                         n_rows=int(duplicated.sum()))
