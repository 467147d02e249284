"""The release: one version everywhere, a valid citation, and a wheel that installs and runs
outside the repository.

The slow test builds the sdist and the wheel (as ``python -m build`` does, in one isolated
environment for both), checks them with ``twine check``, installs the wheel into a new
virtualenv in a temporary folder and runs the console script and the Python API there, from a
working directory outside the repository, so a module or a package data file (the results
page's template, script and styles) left out of the wheel fails here. The config schema and the
judges' prompts are workflow files (``config/``), read by the workflow from a clone, not by the
installed package.

The fresh virtualenv reads this environment's site-packages for the wheel's dependencies and
installs only the wheel (``--no-deps``): measured on the shared 2-core machine, installing the
wheel with its dependencies from the configured index took 223 s, the whole test with this
virtualenv 63-178 s (build and ``twine check`` 23-47 s, install and runs 25-49 s, by the load).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]


def version() -> str:
    return re.search(r'__version__ = "([^"]+)"',
                     (REPO / "polyjudge" / "_version.py").read_text()).group(1)


def test_one_version_in_the_package_the_citation_and_the_changelog():
    import polyjudge
    assert polyjudge.__version__ == version() == "0.2.0"
    citation = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert str(citation["version"]) == version() and citation["license"] == "MIT"
    releases = re.findall(r"^## \[([^\]]+)\] - \d{4}-\d{2}-\d{2}$",
                          (REPO / "CHANGELOG.md").read_text(), flags=re.M)
    assert releases and releases[0] == version()
    pyproject = (REPO / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject and "polyjudge._version.__version__" in pyproject
    assert re.search(r'^license = "MIT"$', pyproject, flags=re.M)
    assert "MIT License" in (REPO / "LICENSE").read_text()


def test_the_citation_names_the_two_papers():
    citation = yaml.safe_load((REPO / "CITATION.cff").read_text())
    references = {ref["identifiers"][0]["value"]: ref["title"] for ref in citation["references"]}
    assert references["arXiv:2608.22432"].startswith("Rank Reversal in Multilingual LLM Judges")
    assert references["arXiv:2606.14278"].startswith("Does the Judge Prefer English?")
    assert citation["authors"] == [{"name": "The polyjudge developers"}]


def fresh_venv(folder: Path, *, see_this_environment: bool) -> Path:
    """A new virtualenv; with ``see_this_environment`` it also reads this interpreter's
    site-packages (a path line in a .pth file: only the directory, not its .pth files, so an
    editable install of the repository there is not seen), as ``--system-site-packages`` would
    for a virtualenv's parent."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    if see_this_environment:
        import sysconfig
        site = next((folder / "lib").glob("python3*/site-packages"))
        (site / "_test_environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return folder / "bin" / "python"


def outside(command: list[str], cwd: Path, timeout: int = 300, clean: bool = True) -> str:
    """``command`` in ``cwd``; ``clean``: without PYTHONPATH and VIRTUAL_ENV (so the fresh
    virtualenv cannot import the repository's package)."""
    env = {k: v for k, v in os.environ.items() if not clean or k not in ("PYTHONPATH",
                                                                         "VIRTUAL_ENV")}
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                            timeout=timeout)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


# The Citation File Format 1.2.0 schema as cffconvert 2.0.0 ships it
# (cffconvert/schemas/1.2.0/schema.json; the schema is CC-BY-4.0, from
# github.com/citation-file-format/citation-file-format), pinned by its checksum.
CFF_SCHEMA = Path(__file__).parent / "cff_schema_1.2.0.json"
CFF_SCHEMA_SHA256 = "0b8d22140da702d766df318dcff3a91af2f39521298dcf36d76315fd99cc169b"


def cff_errors(text: str) -> list[str]:
    """What ``cffconvert --validate`` 2.0.0 does for cff-version 1.2.0, in this process: the
    YAML read with dates kept as text, checked against the schema (Draft 7) with jsonschema's
    format checker. cffconvert itself wants jsonschema < 4 (snakemake needs 4), so running it
    took a virtualenv installed from the index on every run."""
    import hashlib
    import json

    import jsonschema

    class CffLoader(yaml.SafeLoader):
        pass

    CffLoader.add_constructor("tag:yaml.org,2002:timestamp", CffLoader.construct_yaml_str)
    assert hashlib.sha256(CFF_SCHEMA.read_bytes()).hexdigest() == CFF_SCHEMA_SHA256
    schema = json.loads(CFF_SCHEMA.read_text())
    validator = jsonschema.validators.validator_for(schema)(
        schema, format_checker=jsonschema.FormatChecker())
    return [error.message for error in validator.iter_errors(yaml.load(text, CffLoader))]


def test_citation_cff_is_valid():
    """CITATION.cff passes the CFF 1.2.0 schema; a broken copy does not (the check bites)."""
    text = (REPO / "CITATION.cff").read_text()
    assert yaml.safe_load(text)["cff-version"] == "1.2.0"  # the schema cffconvert would pick
    assert cff_errors(text) == []
    broken = re.sub(r'(?m)^date-released: .*$', 'date-released: "2026-13-02"', text)
    broken = broken.replace("\nmessage: ", "\nmessages: ")
    errors = cff_errors(broken)
    assert "'2026-13-02' is not a 'date'" in errors
    assert "'message' is a required property" in errors


def build_sdist_and_wheel(source: Path, dist: Path) -> tuple[Path, Path]:
    """``python -m build --sdist --wheel`` with build's own API, in one isolated environment
    (a new virtualenv with the project's ``build-system.requires``) for both: the command makes
    one per distribution, installing setuptools twice."""
    from build import ProjectBuilder
    from build.env import DefaultIsolatedEnv

    with DefaultIsolatedEnv() as env:
        builder = ProjectBuilder.from_isolated_env(env, source)
        env.install(builder.build_system_requires)
        built = []
        for distribution in ("sdist", "wheel"):
            env.install(builder.get_requires_for_build(distribution))
            built.append(Path(builder.build(distribution, dist)))
    return built[0], built[1]


@pytest.mark.slow
def test_the_wheel_builds_passes_twine_check_and_runs_outside_the_repository(tmp_path):
    from snapshot import copy_repository
    started = time.monotonic()
    source = copy_repository(tmp_path / "polyjudge")  # what a clone has; build/ is left there
    sdist, wheel = build_sdist_and_wheel(source, tmp_path / "dist")
    assert sdist.name == "polyjudge-0.2.0.tar.gz"
    assert wheel.name == "polyjudge-0.2.0-py3-none-any.whl"
    outside([sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)], tmp_path,
            clean=False)
    names = zipfile.ZipFile(wheel).namelist()
    for asset in ("page.css", "page.html.j2", "page.js"):
        assert f"polyjudge/report/page/assets/{asset}" in names, asset
    assert "polyjudge-0.2.0.dist-info/licenses/LICENSE" in names
    metadata = zipfile.ZipFile(wheel).read("polyjudge-0.2.0.dist-info/METADATA").decode()
    assert "License-Expression: MIT" in metadata
    assert "polyjudge-0.2.0/LICENSE" in tarfile.open(sdist).getnames()
    built = time.monotonic() - started

    python = fresh_venv(tmp_path / "venv", see_this_environment=True)
    bin_ = python.parent
    outside([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
             str(wheel)], tmp_path)
    work = tmp_path / "elsewhere"
    work.mkdir()
    assert "fit" in outside([str(bin_ / "polyjudge"), "--help"], work)

    from polyjudge.analyses.synthetic import simulate_panel
    runs = simulate_panel(seed=3, n_tasks=16, n_languages=3, n_backbones=3, n_frameworks=2).runs
    first = runs["task"].isin(sorted(runs["task"].unique())[:10])
    runs[first].to_csv(work / "runs.csv", index=False)
    runs[~first].to_csv(work / "new_runs.csv", index=False)
    outside([str(bin_ / "polyjudge"), "fit", "runs.csv", "-o", "calibrator.json",
             "--band-replicates", "100"], work)
    outside([str(bin_ / "polyjudge"), "apply", "--calibrator", "calibrator.json",
             "new_runs.csv", "-o", "calibrated.csv", "--rankings", "rankings.csv"], work)
    import pandas as pd
    calibrated = pd.read_csv(work / "calibrated.csv")
    assert {"beta", "score_cbc"} <= set(calibrated.columns) and len(calibrated) == (~first).sum()
    assert len(pd.read_csv(work / "rankings.csv")) == 9
    api = ("import pandas as pd, polyjudge\n"
           "print(polyjudge.__file__, polyjudge.__version__)\n"  # imported from the venv
           "runs = pd.read_csv('runs.csv', dtype={'task': str})\n"
           "cbc = polyjudge.calibrate(runs)\n"
           "cal = polyjudge.Calibrator(band_replicates=100).fit(runs)\n"
           "ranks = cal.rank(pd.read_csv('new_runs.csv', dtype={'task': str}))\n"
           "from pathlib import Path\n"
           "import polyjudge.report.page as page\n"
           "assets = Path(page.__file__).parent / 'assets'\n"
           "assert all((assets / a).is_file() for a in ('page.css', 'page.html.j2', 'page.js'))\n"
           "print(len(cbc.beta), len(ranks))\n")
    where, counts = outside([str(python), "-c", api], work).splitlines()
    assert where.startswith(str(tmp_path / "venv")) and where.split()[1] == "0.2.0", where
    assert counts.split() == ["9", "9"]
    ran = time.monotonic() - started - built
    print(f"build and twine check {built:.0f} s, install and run {ran:.0f} s")
