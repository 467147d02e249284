"""The user documentation in docs/ stays true to the code, the config and the rules.

Fast checks (no workflow run): every output a rule declares is documented, every ``polyjudge``
name the docs mention exists, every relative link resolves, and nothing in the docs or the README
points outside the repository. That every configuration key is documented is checked in
tests/test_docs_configuration.py.
"""
from __future__ import annotations

import importlib
import re
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
PAGES = ("README.md", "methods.md", "outputs.md", "configuration.md", "contributing.md",
         "running.md", "performance.md", "api.md", "judges.md", "licences.md", "ci.md")
PAGES += tuple(f"tools/{page.name}" for page in sorted((DOCS / "tools").glob("*.md")))


def text(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def repository_files() -> set[str]:
    """Files a clone has: tracked, or new and not ignored (so results/ does not count)."""
    try:
        listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                                cwd=REPO, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return {line for line in listed.splitlines() if (REPO / line).exists()}


def markdown_files() -> list[str]:
    tools = sorted(f"docs/tools/{p.name}" for p in (DOCS / "tools").glob("*.md"))
    return ["README.md"] + [f"docs/{page}" for page in PAGES] + tools


# --- outputs -----------------------------------------------------------------------------------

def declared_outputs() -> set[str]:
    """``results/...`` paths in the ``output:`` block of every rule, wildcards as ``{name}``."""
    paths = set()
    for rule_file in sorted((REPO / "rules").glob("*.smk")):
        block_indent = None
        for line in rule_file.read_text().splitlines():
            stripped = line.strip()
            indent = len(line) - len(line.lstrip())
            if block_indent is not None and stripped and indent <= block_indent:
                block_indent = None
            if stripped == "output:":
                block_indent = indent
                continue
            if block_indent is not None:
                for path in re.findall(r"""["'](results/[^"']+)["']""", line):
                    paths.add(re.sub(r"\{(\w+),[^}]*\}", r"{\1}", path))
    # the figures jobs (one rule per panel) take their outputs from figure_outputs
    common = (REPO / "rules" / "report.functions.smk").read_text()
    figures = common[common.index("def figure_outputs("):]
    figures = figures[:figures.index("\ndef ", 1)]
    for path in re.findall(r"""f["'](results/[^"']+)["']""", figures):
        paths.add(path.replace("{name}", "{panel}"))
    return paths


def test_every_declared_output_is_documented():
    outputs = declared_outputs()
    assert {"results/claims.csv", "results/{panel}/cbc/beta.csv",
            "results/{panel}/information/null/{convention}_{shard}.parquet"} <= outputs
    assert len(outputs) > 50
    page = text("outputs.md")
    undocumented = sorted(path for path in outputs if path not in page)
    assert not undocumented, f"outputs missing from docs/outputs.md: {undocumented}"


@pytest.mark.parametrize("module, name", [
    ("polyjudge.data.io", "RUN_COLUMNS"), ("polyjudge.data.io", "REQUIREMENT_COLUMNS"),
    ("polyjudge.data.judgment_tree", "COLUMNS"), ("polyjudge.analyses.reversal", "PAIR_COLUMNS"),
    ("polyjudge.analyses.simulation", "SCENARIO_COLUMNS"),
    ("polyjudge.report.claims", "CLAIM_COLUMNS"),
    ("polyjudge.analyses.simulation", "RANK_COVERAGE_COLUMNS"),
    ("polyjudge.analyses.judge_ls", "VERDICT_COLUMNS"),
    ("polyjudge.analyses.judge_ls", "RECOVERY_COLUMNS"),
    ("polyjudge.analyses.diagnostics", "ANOVA_TERMS"),
    ("polyjudge.analyses.labels.ranks", "RANK_COLUMNS"),
])
def test_output_columns_named_in_the_code_are_documented(module, name):
    columns = getattr(importlib.import_module(module), name)
    missing = [column for column in columns if f"`{column}`" not in text("outputs.md")]
    assert not missing, f"{module}.{name} columns missing from docs/outputs.md: {missing}"


# --- names, links, self-containment ------------------------------------------------------------

def resolve(dotted: str) -> bool:
    """Does ``polyjudge.module[.sub].name`` exist (longest importable module, then attributes)?"""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(obj, attribute):
                return False
            obj = getattr(obj, attribute)
        return True
    return False


@pytest.mark.parametrize("page", PAGES)
def test_every_polyjudge_name_in_the_docs_exists(page):
    names = set(re.findall(r"`(polyjudge(?:\.[A-Za-z_]\w*)+)`", text(page)))
    missing = sorted(name for name in names if not resolve(name))
    assert not missing, f"docs/{page} names what the package does not have: {missing}"


def test_methods_keeps_the_section_numbers_code_comments_cite():
    headings = re.findall(r"^## (\d+)\. ", text("methods.md"), flags=re.M)
    assert headings == [str(n) for n in range(len(headings))] and len(headings) >= 9


def test_claims_sections_are_sections_of_methods():
    claims = yaml.safe_load((REPO / "config" / "claims.yaml").read_text())
    headings = set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", text("methods.md"), flags=re.M))
    numbers = {str(claim["section"]).split()[0] for claim in claims}  # 4, or 10.2 (a subsection)
    assert numbers and numbers <= headings, f"claims sections {sorted(numbers - headings)} " \
                                            "are not sections of docs/methods.md"


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    heading = re.sub(r"`", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", heading).replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    without_code = re.sub(r"```.*?```", "", markdown, flags=re.S)
    return {slug(h) for h in re.findall(r"^#{1,6} (.+)$", without_code, flags=re.M)}


def output_pattern(path: str) -> re.Pattern:
    return re.compile(re.sub(r"\\\{\w+\\\}", "[^/]+", re.escape(path)) + "$")


def tracked_markdown(source: str) -> tuple[str, set[str]]:
    """A documentation page's text and the repository's files (skips a page not tracked)."""
    files = repository_files()
    if source not in files:
        pytest.skip(f"{source} is not in the repository")
    return (REPO / source).read_text(encoding="utf-8"), files


@pytest.mark.parametrize("source", markdown_files())
def test_relative_links_resolve(source):
    markdown, files = tracked_markdown(source)
    prose = re.sub(r"```.*?```|`[^`\n]+`", "", markdown, flags=re.S)
    generated = [output_pattern(path) for path in declared_outputs()]
    broken = []
    for target in re.findall(r"!?\[[^\]]*\]\(([^)\s]+)", prose):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path, _, fragment = target.partition("#")
        resolved = (REPO / source).parent / path if path else REPO / source
        relative = resolved.resolve().relative_to(REPO).as_posix()
        if relative.startswith("results/"):
            # a workflow output (not committed): it must be one that a rule declares
            if not any(pattern.match(relative) for pattern in generated):
                broken.append(f"{target} (no rule writes it)")
            continue
        if relative not in files:
            broken.append(f"{target} (no such file in the repository)")
        elif fragment and relative.endswith(".md") and \
                fragment not in anchors((REPO / relative).read_text(encoding="utf-8")):
            broken.append(f"{target} (no such heading)")
    assert not broken, f"{source}: broken links {broken}"


@pytest.mark.parametrize("source", markdown_files())
def test_docs_do_not_point_outside_the_repository(source):
    markdown, _ = tracked_markdown(source)
    outside = "../" + "shared"  # the team's folder beside the repository, which a clone lacks
    assert outside not in markdown, f"{source} names {outside}, which a clone does not have"


# --- the contributing guide and the README's timings ------------------------------------------

def test_the_contributing_guide_names_what_exists():
    """docs/contributing.md walks through adding an analysis: every file, folder and function it
    names exists, and its test commands select tests."""
    guide = text("contributing.md")
    files = repository_files()
    paths = {token for token in re.findall(r"`([\w./-]+/[\w./{}<>-]*)`", guide)
             if "{" not in token and "<" not in token}
    missing = sorted(p for p in paths if p.rstrip("/") not in files
                     and not (REPO / p).is_dir() and not p.startswith("results/"))
    assert not missing, f"docs/contributing.md names files the repository lacks: {missing}"
    for module, name in [("polyjudge.data.errors", "say"),
                         ("polyjudge.data.errors", "api_messages"),
                         ("polyjudge.data.errors", "InputError"),
                         ("polyjudge.scripting", "run_step"),
                         ("polyjudge.judges.plan", "plan_totals"),
                         ("polyjudge.judges.plan", "readable_cost"),
                         ("polyjudge.api", "prepare_runs")]:
        assert re.search(rf"\b{name}\b", guide), name
        assert hasattr(importlib.import_module(module), name), name
    smk = (REPO / "rules" / "common.smk").read_text()
    assert all(f"def {name}(" in smk for name in ("all_targets", "panels_with"))
    assert "def reversal_targets(" in (REPO / "rules" / "reversal.functions.smk").read_text()
    assert hasattr(importlib.import_module("polyjudge.workflow_config"), "analysis_problem")
    for step in ("function", "rule", "thin script", "schema", "output doc", "test", "snapshot",
                 "fast suite"):
        assert re.search(rf"^## \d\. .*{step}", guide, flags=re.M | re.I), step
    assert '-m "not slow"' in guide and "python tests/snapshot.py --update" in guide
    assert "contributing.md" in text("README.md")  # the docs index links it


def readme() -> str:
    return (REPO / "README.md").read_text(encoding="utf-8")


def test_the_readme_is_two_screens_with_the_commands_first():
    """At most 200 lines; the first screen (60 lines) has the two commands and no dated
    timing (no dates, no wall or CPU seconds: those are docs/performance.md's, with the load)."""
    lines = readme().splitlines()
    assert len(lines) <= 200, f"README.md is {len(lines)} lines"
    first = "\n".join(lines[:60])
    assert "&& snakemake --cores 2" in first and "&& python -m pytest -q" in first
    assert not re.search(r"\b20\d\d\b|January|February|March|April|May|June|July|August|"
                         r"September|October|November|December", first)
    assert not re.search(r"\d+(\.\d+)? s (wall|CPU)|s of CPU|CPU time", first)
    assert "![the results page](docs/results_page.png)" in first


def test_the_readme_gives_one_job_count_from_the_benchmark_that_measures_it():
    """One job count, named with benchmarks/reproduction.py, and the job count a dry run of the
    default config plans."""
    counts = re.findall(r"(\d+) jobs", readme())
    assert len(counts) == 1, counts
    sentence = re.search(r"[^.]*\d+ jobs.*?\)\.", readme(), flags=re.S).group(0)
    assert "benchmarks/reproduction.py" in sentence and (REPO / "benchmarks" /
                                                          "reproduction.py").is_file()
    assert "--no-deps" in readme() and re.search(r"`--no-deps` because [^.]+\.", readme())


def test_the_readme_links_the_stopping_rule_docs():
    assert ("Stopping a collection at a precision: "
            "[docs/methods.md#107-stopping-a-collection-at-a-precision]"
            "(docs/methods.md#107-stopping-a-collection-at-a-precision)") in readme()


def test_every_readme_command_is_run_by_a_test():
    """Each command line of the README's code blocks, and the test that runs it verbatim."""
    checked = {
        # tests/conftest.py (readme_reproduction), the slow tests of test_standalone
        "python3 -m venv .venv && . .venv/bin/activate && pip install -q -r requirements.txt -e . "
        "&& snakemake --cores 2",
        # tests/test_packaging.py: .ci/run runs it
        "python3 -m venv .venv && . .venv/bin/activate && pip install -q -r requirements-test.txt "
        "-e . && pip install -q --no-deps -r requirements-local-judge.txt && python -m pytest -q",
        # tests/test_standalone.py (the same block as docs/running.md's)
        "mkdir ../my_project && cd ../my_project",
        "snakemake --cores 2 --snakefile ../polyjudge/Snakefile --configfile my.yaml",
    }
    blocks = re.findall(r"```bash\n(.*?)```", readme(), flags=re.S)
    commands = {line.split("  #")[0].strip() for block in blocks for line in block.splitlines()
                if line.strip() and not line.lstrip().startswith("#")}
    assert commands == checked, commands ^ checked


def install_commands(markdown: str) -> list[str]:
    """Every ``pip install ...`` in a page's code (blocks and spans), to the end of its command."""
    code = " ".join(re.findall(r"```.*?```|`[^`\n]+`", markdown, flags=re.S))
    return [m.strip() for m in re.findall(r"pip install[^`&;\n]*", code)]


def test_every_pip_install_in_the_docs_resolves_to_this_project():
    """A bare ``pip install polyjudge`` (or the old name, which is another project on the
    package index) would install something else: every install names this clone (``-e .``,
    ``-e ".[extra]"``, ``.``), a requirements file of the clone, or a pinned third-party
    package that is not this project."""
    pages = ["README.md", *(f"docs/{p.name}" for p in sorted(DOCS.glob("*.md")))]
    seen = 0
    for page in pages:
        for command in install_commands((REPO / page).read_text(encoding="utf-8")):
            seen += 1
            words = [w.strip("'\"") for w in command.split()[2:] if not w.startswith("-q")]
            targets = []
            skip = False
            for word in words:
                if skip:
                    targets.append(("file", word))
                    skip = False
                elif word in ("-r", "--requirement"):
                    skip = True
                elif word in ("-e", "--editable", "--no-deps", "-U", "--upgrade"):
                    continue
                else:
                    targets.append(("spec", word))
            assert targets, f"{page}: {command!r} installs nothing"
            for kind, target in targets:
                if kind == "file":
                    assert re.fullmatch(r"requirements[\w-]*\.txt", target) and \
                        (REPO / target).is_file(), f"{page}: {command!r}: no such file {target}"
                    continue
                name = re.split(r"[\[=<>!~ ]", target)[0].lower()
                if name in (".", "./"):
                    continue
                assert name not in ("polyjudge", "judgecal"), \
                    f"{page}: {command!r} installs from the package index, not this clone"
                assert "==" in target, f"{page}: {command!r}: {target} is not pinned"
    assert seen >= 4


def test_the_performance_summary_names_the_benchmark_of_every_row():
    """Every row of the performance summary (docs/performance.md, moved there
    from the README) names its benchmark, which exists and which the page names again."""
    performance = text("performance.md")
    table = performance[performance.index("## Summary"):
                        performance.index("The simulation study is")]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) > 3
    for row in rows[1:]:
        named = re.findall(r"`(\w+\.py)`", row.split("|")[-2])
        assert named, f"performance summary row without its benchmark: {row}"
        for script in named:
            assert (REPO / "benchmarks" / script).is_file(), script
    layout = text("README.md")  # docs/README.md: the repository layout lists the benchmarks
    listed = set(re.findall(r"`(\w+\.py)` \(", layout))
    assert listed and all(name in performance for name in listed), listed - set(
        re.findall(r"\w+\.py", performance))


@pytest.mark.parametrize("source", [*markdown_files(), "profiles/slurm/config.yaml"])
def test_the_slurm_profile_is_named_with_workflow_profile(source):
    """``--workflow-profile profiles/slurm`` everywhere: with ``--profile`` Snakemake also reads
    the workflow's ``profiles/default`` and lets it override the cluster settings ("Using
    profiles profiles/slurm and workflow specific profile profiles/default", Snakemake 9)."""
    if source not in repository_files():
        pytest.skip(f"{source} is not in the repository")
    written = (REPO / source).read_text(encoding="utf-8")
    assert not re.search(r"--profile[ =]\S*profiles/", written), \
        f"{source}: the SLURM profile is given with --profile, not --workflow-profile"
