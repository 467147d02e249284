"""What the tool readers share: which of a tool's fields is the judge (``backbone``) and which
the judged system (``framework``), the language read off a task or dataset name, and a record
file read as JSON with its name in every message.

A reader's ``judge:`` and ``system:`` options name one of the tool's own fields (each reader
lists its own, such as ``model`` or ``metric``), ``none`` (no such column; for ``system``
only: every cell then has one run) or ``=<text>``, one label for every row (``judge:
=exact-match``)."""
from __future__ import annotations

import json
import re
from pathlib import Path

from ..errors import InputError

ISO_639_1 = frozenset("""
aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da
de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz
ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln
lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi
pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti
tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu""".split())
"""The two-letter language codes (ISO 639-1): a task name's last part that is one of them is
taken as its language (``xnli_de``, ``mgsm_native_cot_bn``)."""
SCRIPTED = re.compile(r"(?:^|_)([a-z]{3}_[A-Z][a-z]{3})(?:_|$)")
"""A language with its script, as FLORES-200 and Belebele name them (``belebele_deu_Latn``)."""


def choice(option: str, value, fields, source, *, allow_none: bool = False) -> str:
    """``value`` of a ``judge:`` / ``system:`` option, checked: a field, ``none``, ``=text``."""
    value = str(value).strip()
    if value in fields or value.startswith("=") and value[1:].strip() or (
            allow_none and value == "none"):
        return value
    kinds = ", ".join(f"`{option}: {name}`" for name in fields)
    extra = f", `{option}: none`" if allow_none else ""
    raise InputError(source, f"`{option}: {value}` names none of the tool's fields",
                     f"{kinds}{extra} or `{option}: =<label>` (one label for every row)")


def labels(value: str, fields: dict, rows: int):
    """The column a choice gives: the field's values, the constant, or None (no column)."""
    if value == "none":
        return None
    if value.startswith("="):
        return [value[1:].strip()] * rows
    return fields[value]


def language_of(name: str, dataset: str | None = None) -> str | None:
    """The language a task name says: a language with its script (``deu_Latn``), else a last
    part that is a two-letter language code (``de``), else a part that is both such a code and
    the task's dataset name (``afrixnli_sw_prompt_1`` with dataset ``sw``); None if it says
    none (three-letter codes alone are not told apart from words: ``wic``, ``cot``)."""
    scripted = SCRIPTED.findall(name)
    if len(scripted) == 1:
        return scripted[0]
    parts = name.split("_")
    if len(parts) > 1 and parts[-1] in ISO_639_1:
        return parts[-1]
    if dataset and dataset in parts[1:] and dataset in ISO_639_1:
        return dataset
    return None


def read_json(path: Path, what: str):
    """A JSON file, its name in the message where it is not JSON."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(path, f"is not a JSON file ({type(error).__name__}: {error})",
                         what) from None


def json_lines(path: Path, what: str):
    """The records of a JSON Lines file, each with its line number."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(path, f"cannot be read ({type(error).__name__}: {error})",
                         what) from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(f"{path}:{number}", f"is not JSON ({error})", what) from None
        if not isinstance(record, dict):
            raise InputError(f"{path}:{number}", "is not a JSON object", what)
        yield number, record


def only_runs(table: str, tool: str) -> None:
    """The readers give run tables; a verdict table from them is refused."""
    if table != "runs":
        raise InputError(f"format: {tool}", f"a {table} table from {tool} files",
                         f"`format: {tool}` under a panel's `runs` (it gives scores, not "
                         "pairwise verdicts)")
