"""The conditions of ``polyjudge check``: read from a YAML file or from flags, checked against
a JSON schema, so a misspelt key or a wrong type stops naming the file (or flag) and the key.

A conditions file is a mapping with one key, ``conditions``, a list; each entry names its kind
in ``check`` and the rest depends on the kind (docs/ci.md)::

    conditions:
      - check: agreement          # with the reference, from card/agreement.csv
        panel: devai
        judge: "*"
        language: "*"
        measure: cohen_kappa
        at_least: 0.4
      - check: bias               # from card/bias.csv
        bias: position
        at_most: 0.1
      - check: reversal           # no significant rank reversal between two languages
        languages: [English, Swahili]
      - check: mean               # a calibrated mean, from cbc/leaderboard.csv
        judge: gpt-4o
        language: English
        at_least: 20
        at_most: 60

A flag gives one condition as ``KEY=VALUE`` words (``--agreement measure=cohen_kappa
at_least=0.4``); it is checked against the same schema.
"""
from __future__ import annotations

from pathlib import Path

from ..data.errors import InputError
from ..data.yamlfile import read_yaml

KINDS = ("agreement", "bias", "reversal", "mean")
BY = ("interval", "estimate")

_LABELS = {"description": 'a label, a list of labels, or "*" (every one)',
           "anyOf": [{"type": "string", "minLength": 1},
                     {"type": "array", "minItems": 1,
                      "items": {"type": "string", "minLength": 1}}]}
_COMMON = {"check": {"enum": list(KINDS)}, "panel": {"type": "string", "minLength": 1},
           "name": {"type": "string", "minLength": 1}}
_THRESHOLDS = {"at_least": {"type": "number"}, "at_most": {"type": "number"},
               "by": {"enum": list(BY)}}
_BOUNDED = {"description": "needs a threshold: at_least, at_most or both",
            "anyOf": [{"required": ["at_least"]}, {"required": ["at_most"]}]}


def _kind(properties: dict, required=(), bounded=True) -> dict:
    schema = {"type": "object", "additionalProperties": False, "required": ["check", *required],
              "properties": {**_COMMON, **properties}}
    return {**schema, **_BOUNDED} if bounded else schema


SCHEMAS = {
    "agreement": _kind({"judge": _LABELS, "language": _LABELS, "measure": {"type": "string"},
                        "versus": {"type": "string", "minLength": 1}, **_THRESHOLDS}),
    "bias": _kind({"bias": {"type": "string", "minLength": 1}, "judge": _LABELS,
                   "language": _LABELS, **_THRESHOLDS}, required=["bias"]),
    "reversal": _kind({"languages": {"description": 'two languages [A, B], or "*"', "anyOf": [
        {"const": "*"}, {"type": "array", "minItems": 2, "maxItems": 2,
                         "items": {"type": "string", "minLength": 1}}]},
        "fdr": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}},
        required=["languages"], bounded=False),
    "mean": _kind({"judge": _LABELS, "language": _LABELS, **_THRESHOLDS}, required=["judge"]),
}
"""One JSON schema per kind of condition (``check``)."""

SCHEMA = {"type": "object", "additionalProperties": False, "required": ["conditions"],
          "properties": {"conditions": {"type": "array", "minItems": 1, "items": {
              "type": "object", "required": ["check"],
              "properties": {"check": {"enum": list(KINDS)}}}}}}
"""The file's schema: a list of conditions, each naming its kind."""

NUMBERS = ("at_least", "at_most", "fdr")
LISTS = ("judge", "language", "languages")


def _problems(document, schema, base: str = "") -> list[str]:
    try:
        import jsonschema
    except ImportError:  # Snakemake brings it; the package alone does not
        raise InputError("polyjudge check", "needs the jsonschema package to read conditions",
                         "pip install jsonschema (the workflow's environment has it)") from None
    errors = jsonschema.Draft202012Validator(schema).iter_errors(document)
    found = []
    for error in sorted(errors, key=lambda e: [str(p) for p in e.absolute_path]):
        where = (base + "".join(f"[{p}]" if isinstance(p, int) else f".{p}"
                                for p in error.absolute_path)).lstrip(".")
        message = error.message
        if error.validator == "additionalProperties":
            allowed = sorted(error.schema.get("properties", {}))
            message += f" (allowed: {', '.join(allowed)})"
        elif error.validator == "anyOf" and "description" in error.schema:
            message = (error.schema["description"] if "threshold" in
                       error.schema["description"] else
                       f"{error.instance!r} is not {error.schema['description']}")
        found.append(f"{where}: {message}" if where else message)
    return found


def check_conditions(document, source: str, located: bool = True) -> list[dict]:
    """The conditions of a parsed conditions document, each checked against the schema of its
    kind; the first problems stop naming ``source`` and the key (``conditions[2].at_lest``;
    ``located`` False: the key alone, for a flag's one condition)."""
    problems = _problems(document, SCHEMA)
    if not problems:
        for index, condition in enumerate(document["conditions"]):
            base = f"conditions[{index}]" if located else ""
            problems += _problems(condition, SCHEMAS[condition["check"]], base)
    if problems:
        raise InputError(source, "; ".join(problems[:3]) + (
            f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""),
            "conditions as in docs/ci.md: `conditions:`, a list of mappings whose `check` is "
            f"one of {', '.join(KINDS)}")
    return [dict(condition) for condition in document["conditions"]]


def read_conditions(path) -> list[dict]:
    """The conditions of a YAML file (docs/ci.md), checked."""
    if not Path(path).is_file():
        raise InputError(path, "no such file (--conditions)", "a conditions file (docs/ci.md)")
    try:
        document = read_yaml(path)
    except InputError as error:
        if "*" not in str(error):
            raise
        raise InputError(path, str(error).split(": ", 1)[1].split("\n  expected")[0],
                         'the wildcard quoted: judge: "*" (a bare * starts a YAML alias)'
                         ) from None
    return check_conditions(document, str(path))


def flag_condition(kind: str, words: list[str]) -> dict:
    """One condition from a flag's ``KEY=VALUE`` words (``--mean judge=gpt-4o at_least=20``):
    numbers for the thresholds, comma-separated lists for ``languages``, checked as a file's."""
    source = f"--{kind}"
    condition: dict = {"check": kind}
    for word in words:
        key, equals, value = word.partition("=")
        if not equals or not key:
            raise InputError(source, f"{word!r} is not KEY=VALUE",
                             f"words such as at_least=0.4 or judge=gpt-4o (docs/ci.md)")
        if key in condition:
            raise InputError(source, f"{key} is given twice", "each key once")
        if key in NUMBERS:
            try:
                condition[key] = float(value)
            except ValueError:
                raise InputError(source, f"{key}={value!r} is not a number",
                                 f"{key}=0.4, say") from None
        elif key == "languages" and value != "*":
            condition[key] = value.split(",")
        elif key in LISTS and "," in value:
            condition[key] = value.split(",")
        else:
            condition[key] = value
    return check_conditions({"conditions": [condition]}, source, located=False)[0]
