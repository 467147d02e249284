"""promptfoo: the file ``promptfoo eval -o output.json`` (or ``promptfoo export``) writes, one
result per test x prompt x provider, each with its grading result and the result of every
assertion (``componentResults``).

============  ==================================================================================
task          the test's index ``testIdx`` (or its variable ``task_var:``)
language      the test's variable ``language`` (or ``language_var:``), else the source's
              ``constants``
backbone      the grader of the model-graded assertion (``llm-rubric``, ``factuality``,
              ``g-eval``, ...): its ``provider``, else the test's ``options.provider``, else
              the config's ``defaultTest.options.provider``; where none is recorded (promptfoo's
              default grader), the assertion's type
framework     ``system:`` (default ``provider``: the provider's label, else its id)
score         the assertion's score (``llm-rubric``: the grader's score, 1 or 0 for pass / fail
              when it gives none)
============  ==================================================================================

A test with several model-graded assertions gives one row per assertion, each its grader's
(several graders of the same answer: a judge panel); two assertions of one test with the same
grader are ambiguous: ``assertion:`` names the one to read (its type, or its ``metric``).
``assertion: all`` reads the test's overall score (``gradingResult.score``). ``judge:`` may
be ``grader``, ``assertion`` or ``=<label>``; ``system:`` ``provider``, ``prompt`` (the
prompt's label), ``provider_prompt`` or ``=<label>``.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..errors import InputError
from .choices import choice, labels, only_runs, read_json

OPTIONS = ("assertion", "judge", "system", "task_var", "language_var")
MODEL_GRADED = frozenset({"llm-rubric", "model-graded-closedqa", "factuality",
                          "model-graded-factuality", "g-eval", "answer-relevance",
                          "context-faithfulness", "context-recall", "context-relevance",
                          "search-rubric", "select-best", "conversation-relevance",
                          "pi", "classifier"})
"""Assertion types whose score another model gives (promptfoo's model-graded metrics)."""
WHAT = "the output.json of `promptfoo eval -o output.json` (or of `promptfoo export`)"


def read(files, *, table: str = "runs", missing: str = "error", assertion: str | None = None,
         judge: str = "grader", system: str = "provider", task_var: str | None = None,
         language_var: str = "language") -> pd.DataFrame:
    """The runs of promptfoo output files (module docstring: which field gives which column).

    ``assertion``: which assertion's score to read (its type or ``metric``; ``all``: the test's
    overall score), where the model-graded ones do not tell. ``missing``: a result with no
    grading (the provider failed) or without the assertion stops the reading (``error``) or
    gives a missing score (``omit``). Raises :class:`~polyjudge.data.errors.InputError` naming
    the file and result for: a file of another tool, a missing field, an ambiguous
    assertion."""
    only_runs(table, "promptfoo")
    source = ", ".join(map(str, files[:3]))
    judge = choice("judge", judge, ("grader", "assertion"), source)
    system = choice("system", system, ("provider", "prompt", "provider_prompt"), source)
    rows = [row for path in files for row in _read_file(Path(path), assertion, task_var,
                                                        language_var, missing)]
    frame = pd.DataFrame(rows)
    fields = {"grader": frame["grader"], "assertion": frame["assertion"],
              "provider": frame["provider"], "prompt": frame["prompt"],
              "provider_prompt": frame["provider"] + " | " + frame["prompt"]}
    runs = pd.DataFrame({"task": frame["task"], "language": frame["language"],
                         "backbone": list(labels(judge, fields, len(frame))),
                         "framework": list(labels(system, fields, len(frame))),
                         "score": frame["score"].astype(float)})
    _check_prompts(runs, frame, system, source)
    return runs


def _results(path: Path):
    output = read_json(path, WHAT)
    results = output.get("results") if isinstance(output, dict) else None
    if isinstance(results, dict):
        results = results.get("results")
    if not isinstance(results, list) or results and not all(
            isinstance(r, dict) and "provider" in r for r in results):
        raise InputError(path, "has no `results.results` list of results with a `provider`: "
                         "not a promptfoo output file", WHAT)
    return output, results


def _read_file(path: Path, assertion, task_var, language_var, missing):
    output, results = _results(path)
    config = output.get("config") or {}
    default = _provider_id(((config.get("defaultTest") or {}).get("options") or {})
                           .get("provider"))
    for index, result in enumerate(results):
        where = f"{path}: results.results[{index}]"
        provider = result["provider"]
        provider = (provider.get("label") or provider.get("id")) if isinstance(
            provider, dict) else provider
        vars_ = result.get("vars") or (result.get("testCase") or {}).get("vars") or {}
        if task_var is not None and task_var not in vars_:
            raise InputError(where, f"the test has no variable `{task_var}` (task_var)",
                             f"`task_var` naming one of its variables {sorted(vars_)}")
        task = vars_[task_var] if task_var is not None else result.get("testIdx")
        if task is None:
            raise InputError(where, "has no `testIdx`", f"{WHAT}, or `task_var: <variable>`")
        language = vars_.get(language_var)
        test_grader = _provider_id(((result.get("testCase") or {}).get("options") or {})
                                   .get("provider")) or default
        base = {"task": str(task).strip(), "language": None if language is None else
                str(language).strip(), "provider": str(provider),
                "prompt": str((result.get("prompt") or {}).get("label")
                              or result.get("promptIdx"))}
        for name, grader, score in _scores(result, assertion, test_grader, where, missing):
            yield {**base, "assertion": name, "grader": grader, "score": score}


def _scores(result: dict, assertion, test_grader, where: str, missing: str):
    """(assertion, grader, score) of the assertions read from one result."""
    grading = result.get("gradingResult")
    if assertion == "all":
        if grading is None or grading.get("score") is None:
            _missing(where, result, "no gradingResult", missing)
            return [("all", "all", float("nan"))]
        return [("all", "all", float(grading["score"]))]
    components = (grading or {}).get("componentResults") or []
    chosen = [c for c in components if _matches(c.get("assertion") or {}, assertion)]
    if not chosen:
        if assertion is None and grading is not None and not _model_graded(result):
            raise InputError(where, "the test has no model-graded assertion (llm-rubric, "
                             "factuality, g-eval, ...)", "`assertion: <type or metric>` "
                             "naming the assertion to read, or `assertion: all` (the test's "
                             "overall score)")
        _missing(where, result, f"no result of the assertion {assertion or 'model-graded'}",
                 missing)
        name = assertion or next(iter(_model_graded(result)), "llm-rubric")
        return [(name, test_grader or name, float("nan"))]
    found = []
    for component in chosen:
        spec = component.get("assertion") or {}
        name = spec.get("metric") or spec.get("type")
        grader = _provider_id(spec.get("provider")) or test_grader or spec.get("type")
        score = component.get("score")
        if score is None:
            score = 1.0 if component.get("pass") else 0.0
        found.append((str(name), str(grader), float(score)))
    graders = [grader for _, grader, _ in found]
    if len(set(graders)) < len(graders):
        names = [name for name, _, _ in found]
        raise InputError(where, f"{len(found)} assertions {names} graded by the same grader: "
                         "which one is the score is ambiguous", f"`assertion: {names[0]}` "
                         "(a type or metric name) in the source, or `assertion: all`")
    return found


def _matches(spec: dict, assertion) -> bool:
    if assertion is None:
        return spec.get("type") in MODEL_GRADED
    return assertion in (spec.get("type"), spec.get("metric"))


def _model_graded(result: dict) -> list:
    asserts = (result.get("testCase") or {}).get("assert") or []
    return [a.get("type") for a in asserts if isinstance(a, dict)
            and a.get("type") in MODEL_GRADED]


def _missing(where: str, result: dict, what: str, missing: str) -> None:
    if missing == "error":
        error = result.get("error") or "no error recorded"
        raise InputError(where, f"{what} (its error: {str(error)[:120]})",
                         "every result graded (rerun the failed ones: promptfoo eval "
                         "--retry-errors), or `missing: omit` in the panel")


def _provider_id(provider) -> str | None:
    """A grader as promptfoo's config gives it: an id, or a mapping with ``id`` / ``label``."""
    if isinstance(provider, str):
        return provider
    if isinstance(provider, dict):
        found = provider.get("label") or provider.get("id")
        if found:
            return str(found)
        text = provider.get("text") or provider.get("embedding")
        return _provider_id(text)
    return None


def _check_prompts(runs: pd.DataFrame, frame: pd.DataFrame, system: str, source) -> None:
    """Several prompts for one provider repeat each run unless the framework tells them."""
    if system == "provider" and frame.groupby("provider")["prompt"].nunique().gt(1).any():
        raise InputError(source, "the output holds several prompts for one provider: each "
                         "test is answered once per prompt", "`system: provider_prompt` (the "
                         "judged system is the provider with its prompt) or `system: prompt`")
