"""SHA-256 checksums of the default configuration's outputs, and their deliberate regeneration.

``tests/output_checksums.json`` holds the checksum of every file the default ``snakemake``
run writes under ``results/``, except what legitimately changes between runs or machines (see
:data:`EXCLUDED`). ``tests/test_output_checksums.py`` reruns the workflow from empty and compares.

Regenerate only when an output is meant to change, and say why in the commit message::

    python tests/checksums.py --update                   # full run in a copy (~1 min)
    python tests/checksums.py --update --results results # an existing default run, made at the
                                                         # repository root with `snakemake`

The run is the README's: ``snakemake --cores 2`` at the root of a copy of the repository, so the
outputs name their inputs as ``data/...``. A run made with ``--config data_dir=/abs/path`` needs
``--data-dir /abs/path`` (that prefix is replaced by ``<data_dir>`` before hashing).
"""
from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


REPO = Path(__file__).resolve().parents[1]
STORE = REPO / "tests" / "output_checksums.json"
EXCLUDED = (
    "*/logs/*",            # rule logs: timestamps
    "logs/*",
    "*/benchmarks/*",      # rule benchmarks: timings
    "*/inputs.json",       # input files: absolute paths, sizes, checksums
)
"""Glob patterns (relative to ``results/``) of outputs that are not compared."""


def copy_repository(target: Path) -> Path:
    """The repository's files (what git tracks, and new files it does not ignore) copied into
    ``target``: a fresh clone with the working tree's changes, without results or a venv."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, capture_output=True, check=True).stdout.decode()
    for name in filter(None, listed.split("\0")):
        if (REPO / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, target / name)
    return target


def output_checksums(results: Path, data_dir: Path | None = None) -> dict[str, str]:
    """Relative path -> SHA-256 of every compared file under ``results`` (sorted by path).

    Some outputs name their input files (e.g. ``cbc/summary.json``): the absolute ``data_dir``
    of the run is replaced by ``<data_dir>`` before hashing, so the sums do not depend on where
    the repository and its data live.
    """
    prefix = str(Path(data_dir).resolve()).encode() if data_dir else None
    sums = {}
    for path in sorted(p for p in Path(results).rglob("*") if p.is_file()):
        relative = path.relative_to(results).as_posix()
        if not any(fnmatch.fnmatch(relative, pattern) for pattern in EXCLUDED):
            content = path.read_bytes()
            content = content.replace(prefix, b"<data_dir>") if prefix else content
            sums[relative] = hashlib.sha256(content).hexdigest()
    return sums


def run_default(workdir: Path, cores: int = 2) -> Path:
    """``snakemake --cores 2`` from a copy of the repository in ``workdir`` (as the README runs
    the reproduction); returns its ``results`` folder."""
    root = copy_repository(Path(workdir) / "judgecal")
    result = subprocess.run([sys.executable, "-m", "snakemake", "--cores", str(cores)], cwd=root,
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"snakemake failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return root / "results"


def compare(expected: dict[str, str], actual: dict[str, str]) -> list[str]:
    """Human-readable differences between two checksum sets (empty if equal)."""
    problems = [f"missing: {p}" for p in expected if p not in actual]
    problems += [f"new: {p}" for p in actual if p not in expected]
    problems += [f"changed: {p}" for p in expected if p in actual and expected[p] != actual[p]]
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true",
                        help=f"write the checksums to {STORE.relative_to(REPO)}")
    parser.add_argument("--results", type=Path,
                        help="hash this existing results folder of a default run instead")
    parser.add_argument("--data-dir", type=Path,
                        help="the absolute data_dir the existing run was made with, if any")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        results = args.results or run_default(Path(tmp))
        sums = output_checksums(results, args.data_dir)
    if args.update:
        STORE.write_text(json.dumps({"excluded": list(EXCLUDED), "files": sums}, indent=1) + "\n")
        print(f"wrote {len(sums)} checksums to {STORE}")
        return 0
    problems = compare(json.loads(STORE.read_text())["files"], sums)
    print("\n".join(problems) or f"all {len(sums)} outputs match")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
