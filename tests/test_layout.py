"""The package's shape: imports point up the package map, no circles, no oversized module.

The map is the table in docs/README.md#package-map; this file reads it, so the map and the rules
it holds the code to are one text. Imports are read with ``ast`` (also those inside functions),
so a lazy import counts too.
"""
import ast
import inspect
import re
import subprocess
from pathlib import Path

import pytest

import polyjudge

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "polyjudge"
MAP_PAGE = REPO / "docs" / "README.md"


def package_map(page: str) -> dict[str, tuple[str, set[str]]]:
    """The rows of the package map, in order: name under ``polyjudge.`` (``__init__`` for the
    package itself) -> (what it holds, the names it may import besides its own)."""
    section = re.split(r"\n#{1,6} ", page[page.index("## Package map"):])[0]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        name = re.fullmatch(r"`polyjudge(?:\.(\w+))?`", cells[0]) if len(cells) == 3 else None
        if name:
            rows[name.group(1) or "__init__"] = (cells[1], set(re.findall(r"`(\w+)`", cells[2])))
    return rows


MAP = package_map(MAP_PAGE.read_text(encoding="utf-8"))
ALLOWED = {name: {name} | may_import for name, (_, may_import) in MAP.items()}
MAX_MODULE_LINES = 450


def map_problems(rows: dict[str, tuple[str, set[str]]]) -> list[str]:
    """Where the map and the package disagree: every module and subpackage of polyjudge/ has
    its row and every row exists; a subpackage's row names each of its modules (``name``) and
    subpackages (``name/``); a row may import only rows above it (the table's order is the
    pipeline's)."""
    problems = []
    on_disk = {p.stem for p in PACKAGE.glob("*.py") if p.name != "__init__.py"} | {
        p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()} | {"__init__"}
    if set(rows) != on_disk:
        problems.append(f"rows missing: {sorted(on_disk - set(rows))}; rows of nothing: "
                        f"{sorted(set(rows) - on_disk)}")
    above = []
    for name, (holds, may_import) in rows.items():
        folder = PACKAGE / name
        if folder.is_dir():
            named = set(re.findall(r"`([\w/]+)`", holds))
            inside = {p.stem for p in folder.glob("*.py") if p.name != "__init__.py"} | {
                p.name + "/" for p in folder.iterdir() if (p / "__init__.py").is_file()}
            if not inside <= named:
                problems.append(f"the row of polyjudge.{name} omits {sorted(inside - named)}")
        if not may_import <= set(above):
            problems.append(f"polyjudge.{name} may import {sorted(may_import - set(above))}, "
                            f"which are not above it")
        above.append(name)
    return problems


def test_the_package_map_is_true():
    problems = map_problems(MAP)
    assert MAP and not problems, "docs/README.md#package-map: " + "; ".join(problems)


def test_the_map_check_sees_drift():
    page = MAP_PAGE.read_text(encoding="utf-8").replace("`ledger`", "the ledger")
    page = page.replace("| `polyjudge.cbc` |", "| `polyjudge.cbk` |")
    page = re.sub(r"(\| `polyjudge\.data` \|.*\| )nothing else of the package \|",
                  r"\1`report` |", page)
    problems = " ".join(map_problems(package_map(page)))
    assert "rows missing: ['cbc']" in problems and "rows of nothing: ['cbk']" in problems
    assert "polyjudge.judges omits ['ledger']" in problems
    assert "polyjudge.data may import ['report']" in problems


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Absolute names of the polyjudge modules (or packages) ``path`` imports."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "polyjudge":
                continue
            found.add(target)
            # `from . import io`: the names may be modules themselves
            for alias in node.names:
                if (PACKAGE.parent / (target + "." + alias.name).replace(".", "/")).with_suffix(
                        ".py").exists() or (PACKAGE.parent / (target + "." + alias.name)
                                            .replace(".", "/") / "__init__.py").exists():
                    found.add(f"{target}.{alias.name}")
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "polyjudge"}
    return found


def stage_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down_the_pipeline(module):
    stage = stage_of(module)
    assert stage in ALLOWED, f"{module}: a new stage? add its row to docs/README.md#package-map"
    wrong = sorted(target for target in imported_modules(MODULES[module])
                   if stage_of(target) not in ALLOWED[stage] and target != "polyjudge")
    assert not wrong, (f"{module} (stage {stage}) imports {wrong}; it may import only "
                       f"{sorted(ALLOWED[stage])}")


def test_no_import_circle():
    graph = {module: {t for t in imported_modules(path) if t in MODULES and t != module}
             for module, path in MODULES.items()}
    # a package's __init__ re-exporting its own modules is not a circle with them
    graph = {m: {t for t in targets if not m.startswith(t + ".")} for m, targets in graph.items()}
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for target in graph[node]:
            if state.get(target) == "open":
                cycle = stack[stack.index(target):] + [target]
                raise AssertionError("import circle: " + " -> ".join(cycle))
            if target not in state:
                visit(target)
        stack.pop()
        state[node] = "done"

    for module in graph:
        if module not in state:
            visit(module)


def test_the_checker_sees_a_wrong_direction(tmp_path, monkeypatch):
    bad = PACKAGE / "data" / "io.py"
    assert "polyjudge.cbc.estimator" not in imported_modules(bad)
    fake = tmp_path / "polyjudge" / "data" / "x.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("def f():\n    from ..cbc.estimator import double_center\n")
    monkeypatch.setattr(__import__(__name__), "REPO", tmp_path)
    monkeypatch.setattr(__import__(__name__), "PACKAGE", tmp_path / "polyjudge")
    assert imported_modules(fake) == {"polyjudge.cbc.estimator"}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_oversized(module):
    lines = len(MODULES[module].read_text().splitlines())
    assert lines <= MAX_MODULE_LINES, f"{module} has {lines} lines; split it by concern"


# The test suite is held to the same limit: its test files and the helper modules beside them.
TEST_MODULES = {p.name: p for p in sorted((REPO / "tests").glob("*.py"))}


@pytest.mark.parametrize("name", sorted(TEST_MODULES))
def test_no_test_module_is_oversized(name):
    lines = len(TEST_MODULES[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_MODULE_LINES, f"tests/{name} has {lines} lines; split it by concern"


def test_common_smk_holds_only_what_every_stage_shares():
    lines = len((REPO / "rules" / "common.smk").read_text().splitlines())
    assert lines < 300, f"rules/common.smk has {lines} lines"


# The house limit on line length, for the package, the scripts, the benchmarks, the rules and the
# test suite (tests/*.py); a line holding a URL may run over, since an address is not broken.
MAX_LINE_CHARS = 99


def test_no_line_is_over_99_characters():
    files = [p for folder in ("polyjudge", "workflow_scripts", "benchmarks")
             for p in sorted((REPO / folder).rglob("*.py"))]
    files += [REPO / "Snakefile", *sorted((REPO / "rules").glob("*.smk"))]
    files += sorted((REPO / "tests").glob("*.py"))
    long = [f"{p.relative_to(REPO)}:{number}: {len(line)} characters"
            for p in files
            for number, line in enumerate(p.read_text(encoding="utf-8").split("\n"), start=1)
            if len(line) > MAX_LINE_CHARS and not re.search(r"https?://", line)]
    assert not long, (f"wrap these lines to at most {MAX_LINE_CHARS} characters:\n"
                      + "\n".join(long))


def test_public_names_are_plain_functions_and_classes():
    for name in polyjudge.__all__:
        value = getattr(polyjudge, name)
        assert inspect.isfunction(value) or inspect.isclass(value), name
        assert value.__module__.startswith("polyjudge."), name


def test_the_public_functions_named_like_their_modules_stay_functions():
    """``polyjudge.heldout``, ``.reversal`` and ``.judge_ls`` are the functions; their modules live
    under ``polyjudge.analyses`` only, so importing a module never replaces a function and
    ``import polyjudge.judge_ls`` fails loudly instead of handing over a different object."""
    import importlib

    import polyjudge.analyses.judge_ls as judge_ls_module
    for name in ("heldout", "reversal", "judge_ls"):
        module = importlib.import_module(f"polyjudge.analyses.{name}")
        assert inspect.isfunction(getattr(polyjudge, name)), name
        assert getattr(polyjudge, name) is getattr(polyjudge.api, name), name
        assert getattr(polyjudge.analyses, name) is module, name
        assert not (PACKAGE / f"{name}.py").exists() and not (PACKAGE / name).exists(), name
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(f"polyjudge.{name}")
    from polyjudge.analyses import judge_ls
    assert judge_ls is judge_ls_module and callable(judge_ls.flip_table)
    assert "from polyjudge.analyses import judge_ls" in judge_ls_module.__doc__


# InputError lives in polyjudge.data.errors; polyjudge.data.io raises it but is not a second
# address for it.


def input_error_via_io(path: Path) -> bool:
    """Whether ``path`` reaches InputError (or file_rows) through polyjudge.data.io."""
    text = path.read_text(encoding="utf-8")
    if re.search(r"\bio\.(InputError|file_rows)\b", text):
        return True
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "io" \
                and (node.level or (node.module or "").startswith("polyjudge.")):
            if {a.name for a in node.names} & {"InputError", "file_rows"}:
                return True
    return False


def test_input_error_has_one_home():
    files = [p for folder in ("polyjudge", "tests", "workflow_scripts", "benchmarks")
             for p in sorted((REPO / folder).rglob("*.py"))]
    via_io = {str(p.relative_to(REPO)) for p in files
              if p != Path(__file__).resolve() and input_error_via_io(p)}  # this file's examples
    assert not via_io, (
        f"import InputError from polyjudge.data.errors, not io: {sorted(via_io)}")


def test_the_one_home_check_sees_io(tmp_path):
    for text in ["from polyjudge.data.io import InputError\n", "from ..data.io import file_rows\n",
                 "raise io.InputError('x', 'y', 'z')\n"]:
        (tmp_path / "x.py").write_text(text)
        assert input_error_via_io(tmp_path / "x.py"), text
    (tmp_path / "x.py").write_text("from io import StringIO\nfrom .errors import InputError\n")
    assert not input_error_via_io(tmp_path / "x.py")

# History belongs in git and the CHANGELOG: a comment says why the code is as it is, not which
# ticket led there, and a number that means something only in the tracker means nothing in a clone.
TRACKER_REFERENCE = re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE)


def tracked_text_files() -> list[str]:
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True,
                                check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [name for name in listed.decode().split("\0") if name]


def test_no_tracked_file_names_an_issue_number():
    found = []
    for name in tracked_text_files():
        path = REPO / name
        if path.name == "CHANGELOG.md" or not path.is_file():
            continue
        content = path.read_bytes()
        if b"\0" in content[:8192]:
            continue  # binary (Parquet, PNG)
        text = content.decode("utf-8", errors="replace")
        found += [f"{name}:{text.count(chr(10), 0, hit.start()) + 1}: {hit.group(0)}"
                  for hit in TRACKER_REFERENCE.finditer(text)]
    assert not found, ("say why the code is so, without the issue number (the history goes to "
                       "git and CHANGELOG.md):\n" + "\n".join(found))


def test_the_issue_number_check_sees_the_usual_spellings():
    # spelt here in two pieces, so this file passes the check it tests
    for word, number in [("Issue", " 10, parts 3 and 4"), ("(issue", " 6)"),
                         ("issues", " 13 and 15"), ("see issue", " #28"), ("ISSUE", "  7")]:
        assert TRACKER_REFERENCE.search(word + number), word + number
    for text in ["tissue 3", "the issue is 4 cells", "no issues found"]:
        assert not TRACKER_REFERENCE.search(text), text
