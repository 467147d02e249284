"""Shared pytest fixtures (each block is self-contained; add, do not rewrite)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from polyjudge.data.panel import Panel

# the repository's own copy of the default panels' inputs (data/README.md)
DATA = Path(__file__).resolve().parents[1] / "data"


# --- M-RewardBench external panel ---------------------------------------------------------------
MREWARDBENCH_DIR = DATA / "mrewardbench_panel"
MREWARDBENCH_ARTIFACTS = (DATA / "cbc_paper_artifacts" / "data" / "external_validation"
                          / "mrewardbench_panel" / "analysis_1500_item")
# evaluator file stem -> the evaluator label of the published matrices (same order as their
# columns)
MREWARDBENCH_EVALUATORS = {
    "claude_sonnet_4_6": "openrouter/anthropic/claude-sonnet-4.6",
    "deepseek_v3_2": "deepseek/deepseek-v3.2",
    "gemini_3_flash_preview": "openrouter/google/gemini-3-flash-preview",
    "gpt4o_2024_08_06": "openrouter/openai/gpt-4o-2024-08-06",
    "gpt5_4": "openrouter/openai/gpt-5.4",
}
MREWARDBENCH_LANGUAGES = ("eng_Latn", "arb_Arab", "tur_Latn", "zho_Hans", "hin_Deva", "jpn_Jpan",
                          "spa_Latn")


def load_mrewardbench_panel() -> Panel:
    """The 1,500 item x 7 language x 5 evaluator margin panel (margin = chosen - rejected).

    Read through the workflow's own loader: tasks are the item ids in numeric order, strata the
    subsets, backbones the evaluator file stems; a margin is NaN where a score is missing (35).
    """
    from polyjudge.data import io
    runs = io.load_preference_margins(
        {stem: f"{stem}.parquet" for stem in MREWARDBENCH_EVALUATORS}, MREWARDBENCH_DIR)
    runs = io.validate_runs(runs, "mrewardbench", score_range=None, missing="omit")
    return io.build_panel(runs, "mrewardbench", MREWARDBENCH_LANGUAGES,
                          list(MREWARDBENCH_EVALUATORS), allow_missing_cells=True)


@pytest.fixture(scope="session")
def mrewardbench_panel() -> Panel:
    return load_mrewardbench_panel()


# --- DevAI multilingual panel (foundation) -------------------------------------------------------
DEVAI_DIR = DATA / "devai_ml_aaaj"
DEVAI_LANGUAGES = ("English", "Arabic", "Turkish", "Chinese", "Hindi", "Japanese", "Spanish",
                   "Swahili")
DEVAI_BACKBONES = ("gpt-4o", "gpt-5.4", "claude-sonnet-4.6", "gemini-3-flash-preview",
                   "deepseek-v3.2", "qwen3.5-9b")
# display names used by the published tables, in the same order
DEVAI_BACKBONE_LABELS = ("GPT-4o", "GPT-5.4", "Sonnet", "Gemini", "DeepSeek", "Qwen")


@pytest.fixture(scope="session")
def devai_runs() -> pd.DataFrame:
    """The validated 7,920-row devai run table (standard columns)."""
    from polyjudge.data import io
    path = DEVAI_DIR / "run_level_scores.parquet"
    return io.validate_runs(io.read_table(path), path)


@pytest.fixture(scope="session")
def devai_panel(devai_runs) -> Panel:
    """The devai task-level panel T[t, l, b] (55 x 8 x 6) in the published order."""
    from polyjudge.data import io
    return io.build_panel(devai_runs, "devai", DEVAI_LANGUAGES, DEVAI_BACKBONES)


# --- the README's reproduction command in a copy of the repository -----------------------------
def _user_environment():
    """The environment of a new shell: no project virtualenv, no PYTHONPATH."""
    import os
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    venv = os.environ.get("VIRTUAL_ENV")
    if venv:
        env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep)
                                      if not p.startswith(venv))
    return env


def documented_pages() -> list[Path]:
    """The README, then the pages of docs/ (where the README's sections point)."""
    repo = Path(__file__).resolve().parents[1]
    return [repo / "README.md", *sorted((repo / "docs").glob("*.md"))]


def readme_command(prefix: str) -> str:
    """The first command line starting with ``prefix`` in the README or, after it, in docs/."""
    for page in documented_pages():
        for line in page.read_text().splitlines():
            if line.startswith(prefix):
                return line
    raise AssertionError(f"neither the README nor docs/ has a command starting with {prefix!r}")


def run_as_user(command: str, cwd: Path, timeout: int):
    """``command`` in bash, in a new shell's environment; fails the test with its output."""
    import subprocess
    result = subprocess.run(["bash", "-c", command], cwd=cwd, env=_user_environment(),
                            capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def dry_run_in(folder: Path, config: dict | str, config_name: str = "my.yaml",
               snakefile: Path | None = None):
    """``snakemake -n`` of this repository's Snakefile (or ``snakefile``) as a user starts it
    from ``folder``, with ``config`` written there as ``config_name`` (a dict as YAML, a str as
    it is): the finished process (output captured)."""
    import subprocess
    import sys

    import yaml
    (folder / config_name).write_text(config if isinstance(config, str)
                                      else yaml.safe_dump(config))
    snakefile = snakefile or Path(__file__).resolve().parents[1] / "Snakefile"
    return subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "2", "-s",
                           str(snakefile), "--configfile", config_name],
                          cwd=folder, capture_output=True, text=True)


def once_per_run(tmp_path_factory, name: str, build) -> Path:
    """``build(tmp_path_factory)``'s folder, made once for the whole test run, also when
    pytest-xdist runs it in several processes (pyproject's addopts): the first process to ask
    builds it under a file lock, the others wait for it and reuse it."""
    import fcntl
    import json
    import os
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent                      # the workers' basetemps are its subfolders
    made = shared / f"{name}.json"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if made.is_file():
            return Path(json.loads(made.read_text()))
        root = build(tmp_path_factory)
        made.write_text(json.dumps(str(root)))
        return root


def _readme_reproduction(tmp_path_factory) -> Path:
    from snapshot import copy_repository
    root = copy_repository(tmp_path_factory.mktemp("fresh") / "polyjudge")
    assert [p.name for p in root.parent.iterdir()] == ["polyjudge"]
    run_as_user(readme_command("python3 -m venv .venv && . .venv/bin/activate && pip install -q "
                               "-r requirements.txt"), root, timeout=1500)
    return root


@pytest.fixture(scope="session")
def readme_reproduction(tmp_path_factory) -> Path:
    """A copy of the repository alone in an empty folder (no results, no venv, nothing beside
    it) in which the README's first command (install and full reproduction) ran as written;
    made once per test run."""
    return once_per_run(tmp_path_factory, "readme_reproduction", _readme_reproduction)


# --- the default configuration's plan -----------------------------------------------------------
def _default_plan(tmp_path_factory) -> Path:
    import subprocess
    import sys
    folder = tmp_path_factory.mktemp("default_plan")
    repo = Path(__file__).resolve().parents[1]
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--forceall", "--cores",
                             "2"], cwd=repo, capture_output=True, text=True)
    (folder / "plan.txt").write_text(result.stdout + result.stderr)
    (folder / "returncode").write_text(str(result.returncode))
    return folder


@pytest.fixture(scope="session")
def default_plan(tmp_path_factory) -> tuple[int, str]:
    """``snakemake -n --forceall --cores 2`` as a user types it in the repository (the default
    panels, every job named also where a checkout's results/ are up to date): (exit code, its
    text). One dry run for the test run, shared by the tests that read the default plan."""
    folder = once_per_run(tmp_path_factory, "default_plan", _default_plan)
    return int((folder / "returncode").read_text()), (folder / "plan.txt").read_text()


# --- every JSON a workflow wrote is strict JSON -------------------------------------------------
def assert_strict_json(results: Path) -> int:
    """Parse every ``*.json`` under ``results`` as a browser does (``NaN`` and ``Infinity`` are
    not JSON); fails naming each file that is not strict JSON. Returns how many were read."""
    from polyjudge.data.jsonfile import strict_loads
    paths = sorted(Path(results).rglob("*.json"))
    bad = []
    for path in paths:
        try:
            strict_loads(path.read_text(encoding="utf-8"))
        except ValueError as error:
            bad.append(f"{path.relative_to(results)}: {error}")
    assert not bad, "not strict JSON:\n" + "\n".join(bad)
    return len(paths)


# --- the start-up check, in this process -----------------------------------------------------
def start_up_refusal(config: dict, data_dir) -> str:
    """The error common.smk raises at start-up, before any job, for ``config`` (a user's config
    as snakemake reads it): completed from config/config.yaml, then checked against the schema
    and ``data_dir``, here in this process."""
    import yaml

    from polyjudge import workflow_config
    from polyjudge.data.yamlfile import read_yaml
    repo = Path(__file__).resolve().parents[1]
    completed = workflow_config.complete(yaml.safe_load(yaml.safe_dump(config)),
                                         read_yaml(repo / "config" / "config.yaml"))
    with pytest.raises(ValueError) as refused:
        workflow_config.check(completed, Path(data_dir),
                              read_yaml(repo / "config" / "schema" / "config.schema.yaml"))
    return str(refused.value)


# --- results page -------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def page_runs(tmp_path_factory) -> dict:
    """Results folders built from the snapshot (tests/page_results.py) with their pages: run A's
    ``index.html`` (build_page) and ``diff.html`` of run B, a copy of A with one planted beta
    shift and one claim status change, written by ``polyjudge compare`` (in this process, so the
    Vega bundle is made once)."""
    import contextlib
    import io as _io
    import shutil

    from polyjudge import cli
    from polyjudge.report.page import build_page
    from page_results import make_results, plant_change

    root = tmp_path_factory.mktemp("page")
    run_a = make_results(root / "a")
    build_page(run_a, run_a / "index.html")
    run_b = root / "b"
    shutil.copytree(run_a, run_b, ignore=shutil.ignore_patterns("index.html"))
    cell, claim = plant_change(run_b)
    out = _io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(["compare", str(run_a), str(run_b), "-o", str(root / "diff.html")])
    return {"a": run_a, "b": run_b, "page": run_a / "index.html", "diff": root / "diff.html",
            "cell": cell, "claim": claim, "exit": code, "message": out.getvalue()}


# --- no wait for a SLURM controller that is down -------------------------------------------------
# Every snakemake start imports the SLURM executor plugin, which asks the controller for its
# MinJobAge (`scontrol show config`). Where the SLURM client is configured but no controller runs
# (a CI machine before or without `.ci/slurm.sh start`) that question waits about 9 s (10 s, the
# plugin's time-out, where slurm.conf is missing) at every snakemake start, dry runs too.
# Where `scontrol ping` does not answer that a controller is up, the test processes and every
# snakemake they start read an empty SLURM configuration instead, which scontrol and sinfo refuse
# at once; the SLURM tests (tests/test_slurm.py) skip, naming the reason (in the environment as
# POLYJUDGE_TEST_SLURM_DOWN). A running cluster is left alone.
def _silence_a_slurm_controller_that_is_down() -> str:
    """The reason SLURM is treated as absent ("" where there is no client or a controller is
    up); sets SLURM_CONF=/dev/null in this process's environment when it is down."""
    import os
    import shutil
    import subprocess
    if shutil.which("scontrol") is None:
        return ""
    if os.environ.get("SLURM_CONF") == os.devnull:  # the xdist controller decided already
        return os.environ.get("POLYJUDGE_TEST_SLURM_DOWN", "SLURM controller down")
    try:
        ping = subprocess.run(["scontrol", "ping"], capture_output=True, text=True, timeout=5)
        if ping.returncode == 0:
            return ""
        reason = (ping.stdout + ping.stderr).strip().splitlines()[:1] or ["no answer"]
        reason = f"`scontrol ping`: {reason[0]}"
    except subprocess.TimeoutExpired:
        reason = "`scontrol ping` did not answer in 5 s"
    os.environ["SLURM_CONF"] = os.devnull
    os.environ["POLYJUDGE_TEST_SLURM_DOWN"] = reason
    return reason


def pytest_configure(config):
    _silence_a_slurm_controller_that_is_down()


# --- two test processes on two cores (pytest-xdist: `-n auto --dist loadfile` in pyproject) ------
# The suite is mostly snakemake runs in subprocesses, one core at a time: a second process halves
# its wall time. Each test file runs in one process (its module fixtures: servers, collections,
# SLURM projects, are made once). The README's reproduction is the longest fixture: the snapshot
# tests, which need it first, start the run, and the other files that read it come last, when it
# is made (once_per_run).
FIRST, LAST = "test_output_snapshot", ("test_standalone", "test_resources",
                                         "test_page_browser_default_run")


# Fixtures that run snakemake or start servers, and markers of tests that need a cluster or a
# real model: a test that uses one is slow (the fast tier runs none of them), and collection
# stops naming the test that is not marked so.
SLOW_FIXTURES = {"readme_reproduction", "default_plan"}
SLOW_MARKERS = {"slurm", "local_judge"}


def _needs_slow_mark(item) -> bool:
    return item.get_closest_marker("slow") is None and bool(
        SLOW_FIXTURES & set(getattr(item, "fixturenames", ()))
        or any(item.get_closest_marker(m) for m in SLOW_MARKERS))


def pytest_collection_modifyitems(config, items):
    unmarked = [item.nodeid for item in items if _needs_slow_mark(item)]
    if unmarked:
        raise pytest.UsageError(
            "mark these tests @pytest.mark.slow: they use a fixture that runs the workflow "
            f"({', '.join(sorted(SLOW_FIXTURES))}) or need a cluster or a model "
            f"({', '.join(sorted(SLOW_MARKERS))}): {unmarked}")
    items.sort(key=lambda item: 0 if item.path.stem == FIRST else 2 if item.path.stem in LAST
               else 1)


# --- the fast tier's time budget -----------------------------------------------------------------
# The fast tier (`-m "not slow"`: unit and small integration tests, no snakemake runs, no servers)
# must answer in FAST_BUDGET seconds on 2 cores. Every run adds up the time of its fast tests
# (setup, call and teardown, as pytest-xdist's workers report them) and says it in its last
# lines; a run of the fast tier alone (-m "not slow") fails when that time, spread over two
# processes, exceeds the budget. A full run only reports it: there the fast tests share the
# cores with snakemake runs, which inflates their time.
FAST_BUDGET, FAST_PROCESSES = 180.0, 2
_tier_seconds = {"fast": 0.0, "slow": 0.0}
_tier_tests = {"fast": set(), "slow": set()}


def pytest_runtest_logreport(report):
    tier = "slow" if "slow" in report.keywords else "fast"
    _tier_seconds[tier] += report.duration
    _tier_tests[tier].add(report.nodeid)


def fast_tier_estimate() -> float:
    """The fast tests' seconds spread over FAST_PROCESSES processes."""
    return _tier_seconds["fast"] / FAST_PROCESSES


def fast_tier_alone(config) -> bool:
    """Whether this run is the fast tier alone (-m "not slow"), the run the budget holds for."""
    return config.getoption("markexpr", "").replace(" ", "") == "notslow"


def pytest_sessionfinish(session, exitstatus):
    if hasattr(session.config, "workerinput") or not _tier_tests["fast"]:
        return                                      # an xdist worker: the controller adds up
    session.config._fast_tier = fast_tier_estimate()
    if fast_tier_alone(session.config) and session.config._fast_tier > FAST_BUDGET \
            and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    estimate = getattr(config, "_fast_tier", None)
    if estimate is None:
        return
    fast, slow = (len(_tier_tests[t]) for t in ("fast", "slow"))
    line = (f"fast tier: {fast} tests, {_tier_seconds['fast']:.0f} s of test time, about "
            f"{estimate:.0f} s on {FAST_PROCESSES} processes (budget {FAST_BUDGET:.0f} s); "
            f"slow tier: {slow} tests, {_tier_seconds['slow']:.0f} s")
    over = estimate > FAST_BUDGET
    terminalreporter.write_sep("=", line, red=over, green=not over)
    if over and fast_tier_alone(config):
        terminalreporter.write_line(
            "the fast tier is over its budget: mark the slowest fast tests slow (pytest "
            "--durations=30 -m 'not slow' lists them) or make them faster", red=True)
