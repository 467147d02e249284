"""Write real Inspect AI eval logs with planted judge scores, offline (a test helper).

``write_inspect_logs(folder)`` runs genuine ``inspect_ai.eval(...)`` evaluations against Inspect's
mock model provider and returns the planted long table, so a test can check that a reader recovers
exactly what was planted:

=========  ==============================================================
task       the Inspect sample id (``t01``, ``t02``, ...)
framework  the Inspect epoch (1, 2, ...)
backbone   the grader model, as Inspect writes it (``mockllm/grader-a``)
language   the prompt language (sample metadata ``language``; also the task argument)
score      the numeric judge score, an int in 0..``scale`` (scorer ``judge_score``)
grade      the letter grade "C" / "P" / "I" (scorer ``judge_grade``)
verdict    the preferred answer "A" / "B" (scorer ``judge_pairwise``)
order      the answer order shown (sample metadata ``order``)
gold       the better output, "1" or "2" in original order (the sample target)
sample     the Inspect sample id (the task id; ``t01-swapped`` when both orders are run)
=========  ==============================================================

``orders=("original", "swapped")`` runs every task in both answer orders, as two samples
(``t01-original``, ``t01-swapped``) with metadata ``item`` (the task) and ``order``.

Layout (how labs run model-graded evals): one ``@task`` per prompt language, run with ``-T
language=xx``, against each grader model, so one log per grader x language. The sample id is the
task id (identical across languages and graders), the language is in the sample metadata and the
task arguments, the epoch is Inspect's epoch.

Who the grader is (``grader_as``):

* ``"model"`` (default): the grader is the eval's model (``EvalSpec.model``, ``evals_df`` column
  ``model``): the judge model itself is evaluated, it answers "Score: 7 / Grade: P / Preferred: B"
  and the scorers parse that reply.
* ``"role"``: the pattern of ``model_graded_qa``: the eval model is a mock candidate
  (``mockllm/candidate``) that answers the task, and the scorer calls ``get_model(role="grader")``;
  the grader is ``EvalSpec.model_roles["grader"].model`` (``evals_df`` column ``model_roles``).

Either way each Score's metadata also carries ``{"grader": <model name>}``.

The planted values depend only on (seed, task, language, grader, epoch) through a hash, so a cell
keeps its value when other graders, languages or samples are added.

Offline: the mock model's replies carry their token ``usage`` (otherwise mockllm counts tokens with
tiktoken, which downloads its encoding and fails offline), nothing else reaches the network.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import os
import re
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import pandas as pd

__all__ = ["SCORERS", "TASK_NAME", "planted_table", "write_inspect_logs"]

TASK_NAME = "judge_panel"
SCORERS = ("judge_score", "judge_grade", "judge_pairwise")
_GRADES = ("C", "P", "I")
_VERDICTS = ("A", "B")
_CANDIDATE = "mockllm/candidate"

# the (task id, language, epoch, order) of the sample whose grader is generating right now: set by
# the solver just before it calls the mock model, read by the mock's output function
_CURRENT: contextvars.ContextVar[tuple[str, str, int, str]] = contextvars.ContextVar(
    "judge_sample")


# --------------------------------------------------------------------------- planted values
def _draw(seed: int, *key: Any) -> int:
    text = "|".join(str(part) for part in (seed, *key))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def _planted(seed: int, task: str, language: str, grader: str, epoch: int, scale: int,
             order: str = "original"):
    score = _draw(seed, "score", task, language, grader, epoch, order) % (scale + 1)
    grade = _GRADES[_draw(seed, "grade", task, language, grader, epoch, order) % 3]
    verdict = _VERDICTS[_draw(seed, "verdict", task, language, grader, epoch, order) % 2]
    return score, grade, verdict


def _gold(seed: int, task: str) -> str:
    return str(1 + _draw(seed, "gold", task) % 2)


def _sample_id(task: str, order: str, orders: Sequence[str]) -> str:
    return task if len(orders) == 1 else f"{task}-{order}"


def _task_ids(n_samples: int) -> list[str]:
    width = max(2, len(str(n_samples)))
    return [f"t{i:0{width}d}" for i in range(1, n_samples + 1)]


def planted_table(
    *,
    graders: Sequence[str] = ("mockllm/grader-a", "mockllm/grader-b"),
    languages: Sequence[str] = ("en", "de", "ja"),
    n_samples: int = 4,
    epochs: int = 2,
    seed: int = 0,
    scale: int = 10,
    orders: Sequence[str] = ("original",),
) -> pd.DataFrame:
    """The table ``write_inspect_logs`` plants, without running anything."""
    rows = [
        (task, epoch, grader, language,
         *_planted(seed, task, language, grader, epoch, scale, order), order, _gold(seed, task),
         _sample_id(task, order, orders))
        for grader in graders
        for language in languages
        for task in _task_ids(n_samples)
        for order in orders
        for epoch in range(1, epochs + 1)
    ]
    table = pd.DataFrame(
        rows, columns=["task", "framework", "backbone", "language", "score", "grade", "verdict",
                       "order", "gold", "sample"]
    )
    return table.astype({"framework": "int64", "score": "int64"})


# --------------------------------------------------------------------------- the mock grader
def _mock_grader(grader: str, seed: int, scale: int):
    """A mockllm ``custom_outputs`` callable: the planted reply of ``grader`` for the sample."""
    from inspect_ai.model import ModelOutput, ModelUsage

    def generate(input, tools, tool_choice, config):
        task, language, epoch, order = _CURRENT.get()
        score, grade, verdict = _planted(seed, task, language, grader, epoch, scale, order)
        text = f"Score: {score}\nGrade: {grade}\nPreferred: {verdict}"
        output = ModelOutput.from_content(model=grader, content=text)
        # usage present -> mockllm does not count tokens with tiktoken (a network download)
        output.usage = ModelUsage(input_tokens=50, output_tokens=len(text),
                                  total_tokens=50 + len(text))
        return output

    return generate


def _mock_candidate():
    from inspect_ai.model import ModelOutput, ModelUsage

    def generate(input, tools, tool_choice, config):
        output = ModelOutput.from_content(model=_CANDIDATE, content="Candidate answer.")
        output.usage = ModelUsage(input_tokens=20, output_tokens=17, total_tokens=37)
        return output

    return generate


# --------------------------------------------------------------------------- task, solver, scorers
def _build_task_factory():
    """Define the registered @task / @solver / @scorer objects (imports inspect_ai lazily)."""
    from inspect_ai import Task, task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import get_model
    from inspect_ai.scorer import (CORRECT, INCORRECT, PARTIAL, Score, Target, accuracy, mean,
                                   scorer)
    from inspect_ai.solver import Generate, TaskState, solver

    def reply_of(state: TaskState) -> str:
        return state.store.get("judge_reply") or state.output.completion

    def field(reply: str, name: str) -> str | None:
        found = re.search(rf"^{name}:\s*(\S+)\s*$", reply, re.MULTILINE)
        return found.group(1) if found else None

    def grader_name(state: TaskState) -> str:
        return state.store.get("judge_grader") or str(state.model)

    @solver
    def judge_solver(grader_as: str = "model"):
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            meta = state.metadata
            token = _CURRENT.set((meta["item"], meta["language"], state.epoch, meta["order"]))
            try:
                state = await generate(state)  # the eval model: grader, or candidate ("role")
                if grader_as == "role":
                    grader = get_model(role="grader")
                    prompt = (f"{state.input_text}\n\nAnswer:\n{state.output.completion}"
                              "\n\nJudge it.")
                    judged = await grader.generate(prompt)
                    state.store.set("judge_reply", judged.completion)  # kept out of metadata
                    state.store.set("judge_grader", str(grader))
            finally:
                _CURRENT.reset(token)
            return state

        return solve

    @scorer(metrics=[mean()])
    def judge_score():
        async def score(state: TaskState, target: Target) -> Score:
            reply = reply_of(state)
            value = field(reply, "Score")
            return Score(
                value=int(value) if value is not None else 0,
                answer=value,
                explanation=reply,
                metadata={"grader": grader_name(state)},
            )

        return score

    @scorer(metrics=[accuracy()])
    def judge_grade():
        letters = {"C": CORRECT, "P": PARTIAL, "I": INCORRECT}

        async def score(state: TaskState, target: Target) -> Score:
            value = field(reply_of(state), "Grade")
            return Score(
                value=letters.get(value or "", INCORRECT),
                answer=value,
                metadata={"grader": grader_name(state)},
            )

        return score

    @scorer(metrics=[])
    def judge_pairwise():
        async def score(state: TaskState, target: Target) -> Score:
            value = field(reply_of(state), "Preferred")
            return Score(value=value or "", answer=value, metadata={"grader": grader_name(state)})

        return score

    @task(name=TASK_NAME)
    def judge_panel(
        language: str = "en",
        n_samples: int = 4,
        grader_as: str = "model",
        letter_grades: bool = True,
        pairwise: bool = True,
        orders: str = "original",
        seed: int = 0,
    ):
        order_list = orders.split(",")
        samples = [
            Sample(
                id=_sample_id(task_id, order, order_list),
                input=f"[{language}] Judge the response to item {task_id} ({order} order). "
                "Reply 'Score: <number>', 'Grade: <C|P|I>', 'Preferred: <A|B>'.",
                target=_gold(seed, task_id),
                metadata={"language": language, "item": task_id, "order": order},
            )
            for task_id in _task_ids(n_samples)
            for order in order_list
        ]
        scorers = [judge_score()]
        if letter_grades:
            scorers.append(judge_grade())
        if pairwise:
            scorers.append(judge_pairwise())
        return Task(
            dataset=MemoryDataset(samples, name=f"judge_panel_{language}"),
            solver=judge_solver(grader_as),
            scorer=scorers,
        )

    return judge_panel


_FACTORY = None


def _factory():
    global _FACTORY
    if _FACTORY is None:
        _FACTORY = _build_task_factory()
    return _FACTORY


_SCAN = None


@contextlib.contextmanager
def _distributions_scanned_once():
    """Inspect records which installed distribution ships each task (the log's ``packages``);
    for a task in a module no distribution is named after (this file), it scans the file lists
    of every installed distribution (``importlib.metadata.packages_distributions``), once per
    task: about 0.5 s each in the test environment, most of an eval's time. The installed
    distributions do not change while the evals run, so the scan is made once per process and
    its answer reused: the logs are the same."""
    from inspect_ai._util import package
    global _SCAN
    original = getattr(package, "packages_distributions", None)
    if original is None:  # another inspect_ai: nothing to speed up
        yield
        return
    if _SCAN is None:
        _SCAN = functools.cache(original)
    package.packages_distributions = _SCAN
    try:
        yield
    finally:
        package.packages_distributions = original


# --------------------------------------------------------------------------- the entry point
def write_inspect_logs(
    folder: str | os.PathLike,
    *,
    graders: Sequence[str] = ("mockllm/grader-a", "mockllm/grader-b"),
    languages: Sequence[str] = ("en", "de", "ja"),
    n_samples: int = 4,
    epochs: int = 2,
    seed: int = 0,
    log_format: Literal["eval", "json"] = "eval",
    scale: int = 10,
    grader_as: Literal["model", "role"] = "model",
    letter_grades: bool = True,
    pairwise: bool = True,
    orders: Sequence[str] = ("original",),
) -> pd.DataFrame:
    """Run one real, offline Inspect eval per grader x language into ``folder``.

    Returns the planted long table (task, framework, backbone, language, score, grade, verdict),
    one row per (grader, language, sample, epoch), in that order. ``grade`` is None when
    ``letter_grades`` is False and ``verdict`` None when ``pairwise`` is False. Raises
    RuntimeError when a log does not finish with status "success". Also returns ``order``,
    ``gold`` and ``sample`` (the sample id) per row.
    """
    for grader in graders:
        if not grader.startswith("mockllm/"):
            raise ValueError(f"graders must be mockllm/... models (offline), got {grader!r}")
    if len(set(graders)) != len(graders) or len(set(languages)) != len(languages):
        raise ValueError("graders and languages must not repeat")
    if not graders or not languages or n_samples < 1 or epochs < 1:
        raise ValueError("need at least one grader, one language, one sample and one epoch")
    if grader_as not in ("model", "role"):
        raise ValueError(f"grader_as must be 'model' or 'role', got {grader_as!r}")
    if log_format not in ("eval", "json"):
        raise ValueError(f"log_format must be 'eval' or 'json', got {log_format!r}")

    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    judge_panel = _factory()
    common = {
        "epochs": epochs,
        "log_dir": str(folder),
        "log_format": log_format,
        "display": "none",
        "log_level": "warning",
        "score_display": False,
        "max_tasks": max(1, len(graders) * len(languages)),
        "log_realtime": False,
        "fail_on_error": True,
    }

    def grader_model(grader: str):
        return get_model(grader, custom_outputs=_mock_grader(grader, seed, scale), memoize=False)

    def tasks():
        return [
            judge_panel(
                language=language,
                n_samples=n_samples,
                grader_as=grader_as,
                letter_grades=letter_grades,
                pairwise=pairwise,
                orders=",".join(orders),
                seed=seed,
            )
            for language in languages
        ]

    logs = []
    with warnings.catch_warnings(), _distributions_scanned_once():
        # inspect_ai 0.3.285's retry wrapper warns once per generate call (tenacity's "initial")
        warnings.filterwarnings("ignore", message="The 'initial' parameter is deprecated")
        if grader_as == "model":
            # one eval() call: tasks x models, one log per (language task, grader model)
            models = [grader_model(grader) for grader in graders]
            logs += inspect_eval(tasks(), model=models, **common)
        else:
            candidate = get_model(_CANDIDATE, custom_outputs=_mock_candidate(), memoize=False)
            for grader in graders:  # model roles are per eval() call
                logs += inspect_eval(
                    tasks(), model=candidate, model_roles={"grader": grader_model(grader)},
                    **common
                )

    bad = [(log.location, log.status, log.error and log.error.message) for log in logs
           if log.status != "success"]
    if bad:
        raise RuntimeError(f"Inspect evals did not succeed: {bad}")

    table = planted_table(
        graders=graders, languages=languages, n_samples=n_samples, epochs=epochs, seed=seed,
        scale=scale, orders=orders,
    )
    if not letter_grades:
        table["grade"] = None
    if not pairwise:
        table["verdict"] = None
    return table


if __name__ == "__main__":  # quick manual check: python inspect_logs.py [folder]
    import sys
    import tempfile
    import time

    target = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="inspect-logs-")
    start = time.perf_counter()
    planted = write_inspect_logs(target)
    print(f"{len(planted)} planted rows, logs in {target}, {time.perf_counter() - start:.2f} s")
    print(planted.head(8).to_string())
