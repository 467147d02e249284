"""The Inspect log reader where there is no log to read: inspect-ai not installed (and
``import polyjudge`` not importing it), a folder without logs, a path that does not exist.

They need no evaluation, so they are apart from tests/test_inspect_logs.py, whose module fixtures
run the offline Inspect evaluations.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

import polyjudge
from polyjudge.data.errors import InputError


@pytest.fixture(scope="module")
def fresh_interpreter(tmp_path_factory) -> subprocess.CompletedProcess:
    """One new interpreter (this one has imported inspect_ai) answers both import questions:
    whether ``import polyjudge`` imports inspect_ai, then what read_inspect_logs says when
    inspect_ai cannot be imported (blocked after polyjudge's import, which the first line shows
    did not import it)."""
    folder = tmp_path_factory.mktemp("no_inspect")
    code = ("import sys, polyjudge\n"
            "print('inspect_ai' in sys.modules)\n"
            "sys.modules['inspect_ai'] = None\n"
            "try:\n"
            f"    polyjudge.read_inspect_logs({str(folder)!r})\n"
            "except polyjudge.data.InputError as error:\n"
            "    print(error)\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_a_missing_inspect_ai_says_how_to_install_it(fresh_interpreter):
    message = "".join(fresh_interpreter.stdout.splitlines(keepends=True)[1:])
    assert 'pip install -e ".[inspect]"' in message, fresh_interpreter.stderr
    assert "inspect-ai, which is not installed" in message


def test_import_polyjudge_does_not_import_inspect(fresh_interpreter):
    assert fresh_interpreter.stdout.splitlines()[:1] == ["False"], fresh_interpreter.stderr


def test_a_folder_without_logs(tmp_path):
    pytest.importorskip("inspect_ai")  # without it, the message says to install it first
    (tmp_path / "notes.txt").write_text("not a log")
    with pytest.raises(InputError, match="is a folder with no Inspect logs"):
        polyjudge.read_inspect_logs(tmp_path)
    with pytest.raises(InputError, match="not found"):
        polyjudge.read_inspect_logs(tmp_path / "missing")
