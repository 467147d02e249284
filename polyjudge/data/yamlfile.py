"""YAML in, with libyaml's parser where PyYAML has it, and a file that is not YAML named with
its line.

The workflow reads its schema, its defaults and the claims file at every start (and SLURM jobs
start it once each): libyaml parses them about ten times faster than PyYAML's pure-Python parser,
which is used where libyaml is missing. Both build the same objects (the same safe constructor
and resolver). A file that does not parse stops with an :class:`~.errors.InputError` naming the
file, the line and column, what the parser expected, the line itself and, for the usual slip (a
key indented unlike its neighbours, a tab), how to fix it.
"""
from __future__ import annotations

from pathlib import Path

import yaml

from .errors import InputError

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# the parsers' words for a line indented unlike its mapping or list (PyYAML's, then libyaml's)
INDENTATION = ("expected <block end>", "did not find expected key", "did not find expected '-'",
               "mapping values are not allowed")


def parse_yaml(text, name=None):
    """The object a YAML document (str, bytes or an open file) describes, as yaml.safe_load;
    ``name``: the file it came from, for the message of a document that does not parse."""
    try:
        return yaml.load(text, Loader=LOADER)
    except yaml.YAMLError as error:
        if name is None:
            raise
        raise yaml_error(name, error, text) from None


def read_yaml(path, name=None):
    """The object the YAML file at ``path`` describes, as yaml.safe_load; a file that does not
    parse stops naming its line (:func:`yaml_error`) and the file as ``name`` (default
    ``path``: Snakemake reads a workflow's own files from a cache copy)."""
    data = Path(path).read_bytes()
    return parse_yaml(data, path if name is None else name)


def yaml_error(path, error: yaml.YAMLError, text=None) -> InputError:
    """The message of a YAML file that does not parse: file, line and column, the parser's
    words, the line itself (``text``: the document, str or bytes) and the fix."""
    mark = getattr(error, "problem_mark", None)
    if mark is None:  # no position: bytes that are not text (yaml.reader.ReaderError)
        return InputError(path, f"is not a YAML file ({error})", "UTF-8 text in YAML")
    lines = _lines(text)
    said = error.problem or "not YAML"
    context = getattr(error, "context_mark", None)
    if error.context and context is not None and context.line != mark.line:
        said += (f" ({error.context} that starts at line {context.line + 1}, column "
                 f"{context.column + 1})")
    shown = ""
    if mark.line < len(lines):
        shown = (f"\n    {mark.line + 1:>4} | {lines[mark.line]}\n         | "
                 f"{' ' * mark.column}^")
    return InputError(path, f"is not valid YAML at line {mark.line + 1}, column "
                      f"{mark.column + 1}: {said}{shown}", _fix(said, mark, lines))


def _fix(said: str, mark, lines: list[str]) -> str:
    line = lines[mark.line] if mark.line < len(lines) else ""
    if "\t" in line[:mark.column + 1] or "'\\t'" in said:
        return (f"spaces, not tabs, to indent (line {mark.line + 1} has a tab): YAML does "
                "not allow tabs in indentation")
    if not any(words in said for words in INDENTATION):
        return "valid YAML: the parser's words above say what it expected there"
    above = next((i for i in range(mark.line - 1, -1, -1)
                  if lines[i].strip() and not lines[i].lstrip().startswith("#")), None)
    here = f"line {mark.line + 1} is indented by {_indent(line)} space(s)"
    if above is not None:
        here += f", line {above + 1} above it by {_indent(lines[above])}"
    return ("the keys of one mapping (and the items of one list) indented by the same number "
            "of spaces, a key's own keys by more than the key, and a space after each colon: "
            f"{here}")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _lines(text) -> list[str]:
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    return text.lstrip("\ufeff").splitlines() if isinstance(text, str) else []


def key_lines(path) -> dict[str, int]:
    """Where the YAML file at ``path`` sets each key: dotted path (``panels.mine.runs``; list
    items by their index, ``heldout.methods.0``) -> line (1 = first). Empty for a file that
    does not parse (its message is :func:`yaml_error`'s)."""
    try:
        root = yaml.compose(Path(path).read_bytes(), Loader=LOADER)
    except (OSError, yaml.YAMLError):
        return {}
    found: dict[str, int] = {}
    stack = [(root, "")]
    while stack:
        node, prefix = stack.pop()
        if isinstance(node, yaml.MappingNode):
            items = [(f"{prefix}{key.value}", key, value) for key, value in node.value]
        elif isinstance(node, yaml.SequenceNode):
            items = [(f"{prefix}{i}", item, item) for i, item in enumerate(node.value)]
        else:
            continue
        for dotted, key, value in items:
            found.setdefault(dotted, key.start_mark.line + 1)
            stack.append((value, dotted + "."))
    return found
