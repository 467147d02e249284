"""The workflow's configuration: a user's config completed from the defaults, and strict keys.

A user's config (``--configfile`` / ``--config``) is completed from ``config/config.yaml`` by
:func:`fill_defaults`: every setting left out comes from the defaults, but collections (``panels``,
simulation ``scenarios``, requirement ``groups``, ...) are replaced as a whole, so a user's panels
are the only panels. :func:`unknown_keys` finds keys the JSON schema does not declare, at any
level, with the nearest valid key, so a typo (``analysis`` for ``analyses``) stops the run before
anything is computed instead of being silently ignored.
"""
from __future__ import annotations

import copy

from .errors import InputError, did_you_mean
from .io import check_score_range

# Collections a user replaces as a whole (their entries are names, not settings to fill in).
COLLECTIONS = ("panels", "scenarios", "groups", "per_stratum", "files", "variant_texts",
               "columns", "endpoints")


def fill_defaults(user: dict, defaults: dict) -> dict:
    """Fill settings missing from ``user`` with those of ``defaults``, recursively, in place."""
    for key, value in defaults.items():
        if key not in user:
            user[key] = copy.deepcopy(value)
        elif key not in COLLECTIONS and isinstance(value, dict) and isinstance(user[key], dict):
            fill_defaults(user[key], value)
    return user


def _resolve(schema: dict, root: dict) -> dict:
    """A ``$ref``-only schema replaced by its target (``#/$defs/<name>``)."""
    while set(schema) == {"$ref"}:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _matches(condition: dict, instance: dict, root: dict) -> bool:
    """Does ``instance`` satisfy an ``if`` of the schema (only ``properties: {k: {const}}``)?"""
    for key, rule in condition.get("properties", {}).items():
        rule = _resolve(rule, root)
        if "const" in rule and instance.get(key) != rule["const"]:
            return False
        if "enum" in rule and instance.get(key) not in rule["enum"]:
            return False
    return all(key in instance for key in condition.get("required", ()))


def _declared(schema: dict, instance: dict, root: dict) -> tuple[dict, dict | bool | None]:
    """Property schemas an object may have (following allOf / anyOf and matching if-then), and
    the schema of any other key (``additionalProperties``; None when not given)."""
    schema = _resolve(schema, root)
    properties = dict(schema.get("properties", {}))
    extra = schema.get("additionalProperties")
    branches = (list(schema.get("allOf", ())) + list(schema.get("anyOf", ()))
                + list(schema.get("oneOf", ())))
    if "$ref" in schema:  # a reference beside other keywords acts as one more branch
        branches.append({"$ref": schema["$ref"]})
    for branch in branches:
        branch = _resolve(branch, root)
        if "if" in branch:
            branch = branch.get("then" if _matches(branch["if"], instance, root) else "else", {})
        more, more_extra = _declared(branch, instance, root)
        for key, rule in more.items():
            properties[key] = _either(properties[key], rule, root) if key in properties \
                else rule
        if isinstance(more_extra, dict):
            extra = more_extra
    return properties, extra


def unknown_keys(config: dict, schema: dict, where: str = "") -> list[str]:
    """Keys of ``config`` the schema does not declare, each as one readable line.

    An object is strict where its schema lists ``properties`` and allows no other keys
    (``additionalProperties: false`` or ``unevaluatedProperties: false``); a collection (whose
    ``additionalProperties`` is a schema) checks each entry against that schema.
    """
    return _unknown(config, schema, schema, where)


def _unknown(instance, schema: dict, root: dict, where: str) -> list[str]:
    if not isinstance(instance, dict):
        return []
    schema = _resolve(schema, root)
    properties, extra = _declared(schema, instance, root)
    strict = _strict(schema, root)
    problems = []
    prefix = f"{where}." if where else ""
    names = _resolve(schema.get("propertyNames", {}), root).get("enum")
    if names is not None:  # a mapping whose keys come from a fixed set (a panel's `columns`)
        problems += [f"  unknown key '{key}' at {prefix}{key}: {_hint(key, names, 'one of')}"
                     for key in instance if key not in names]
        instance = {key: value for key, value in instance.items() if key in names}
    for key, rule in properties.items():
        rule = _resolve(rule, root)
        value = instance.get(key)
        if key in instance and "enum" in rule and value not in rule["enum"]:
            # an unknown discriminator (a panel's `kind`) decides which keys are valid: say so
            # and leave the other keys of this object unchecked
            strict = False
            problems.append(f"  {prefix}{key}: {value!r} is not one of "
                            f"{', '.join(str(c) for c in rule['enum'])}")
        items = _resolve(rule.get("items", {}), root)
        if isinstance(value, list) and "enum" in items:  # names from a fixed set (`analyses`)
            problems += [f"  unknown value {v!r} in {prefix}{key}: {_hint(v, items['enum'])}"
                         for v in value if v not in items["enum"]]
    for key, value in instance.items():
        if key in properties:
            problems += _unknown(value, properties[key], root, prefix + str(key))
            items = _array_items(properties[key], root) if isinstance(value, list) else None
            for number, entry in enumerate(value if items else ()):
                problems += _unknown(entry, items, root, f"{prefix}{key}[{number}]")
        elif isinstance(extra, dict):
            problems += _unknown(value, extra, root, prefix + str(key))
        elif strict:
            problems.append(f"  unknown key '{key}' at {prefix}{key}: "
                            f"{_hint(key, properties, 'valid keys here')}")
    return problems


def _array_items(schema: dict, root: dict) -> dict | None:
    """The schema of a list's entries where ``schema`` allows a list of objects (a panel's
    ``runs``: one source or a list of them), so each entry's keys are checked too."""
    schema = _resolve(schema, root)
    for form in [schema, *(_resolve(b, root) for b in schema.get("anyOf", ()))]:
        if form.get("type") == "array" and isinstance(form.get("items"), dict):
            return form["items"]
    return None


def _either(first: dict, second: dict, root: dict) -> dict:
    """A key two branches declare: its values are those of either (a table source's
    ``format`` is a file format or a tool's name)."""
    first, second = _resolve(first, root), _resolve(second, root)
    if "enum" in first and "enum" in second:
        return {**first, "enum": [*first["enum"], *(v for v in second["enum"]
                                                   if v not in first["enum"])]}
    return first


def _strict(schema: dict, root: dict) -> bool:
    """Does the schema allow no keys but those it declares? Directly, through a ``$ref`` beside
    other keywords (``{$ref: ..., description: ...}``), one ``allOf`` part, or every object
    form of its alternatives."""
    schema = _resolve(schema, root)
    parts = list(schema.get("allOf", ())) + ([{"$ref": schema["$ref"]}] if "$ref" in schema
                                              else [])
    return (schema.get("additionalProperties") is False
            or schema.get("unevaluatedProperties") is False
            or _strict_alternatives(schema, root)
            or any(_strict(part, root) for part in parts))


def _strict_alternatives(schema: dict, root: dict) -> bool:
    """Is every object form of an ``anyOf`` / ``oneOf`` strict (a table source written as a
    mapping: path and template keys, or an Inspect source)? Then a key none of them declares is
    a typo, named here rather than by the validator's "'runs' was unexpected"."""
    objects = _object_forms(schema, root)
    return bool(objects) and all(form.get("additionalProperties") is False for form in objects)


def _object_forms(schema: dict, root: dict) -> list[dict]:
    """The object forms among a schema's alternatives, through nested ``anyOf`` / ``oneOf``
    (a table source: one mapping, or a list of them)."""
    forms = []
    for branch in list(schema.get("anyOf", ())) + list(schema.get("oneOf", ())):
        form = _resolve(branch, root)
        if form.get("type") == "object" or "properties" in form:
            forms.append(form)
        elif "type" not in form:
            forms += _object_forms(form, root)
            forms += [part for part in (_resolve(p, root) for p in form.get("allOf", ()))
                      if part.get("type") == "object" or "properties" in part]
    return forms


def _hint(word, choices, what: str = "one of") -> str:
    """'did you mean X?' for the nearest of ``choices``, else the list of them."""
    choices = [str(c) for c in choices]
    near = did_you_mean(word, choices)
    return f"did you mean '{near}'?" if near else f"{what}: {', '.join(sorted(choices))}"


# the heading and last line of the unknown-keys message (also polyjudge.workflow_config's)
UNKNOWN_KEYS = ("the config has keys or values the workflow does not know (nothing was run):",
                "  every key is listed in docs/configuration.md")


def check_keys(config: dict, schema: dict) -> None:
    """Raise ValueError listing every unknown key of ``config``, with the nearest valid one."""
    problems = unknown_keys(config, schema)
    if problems:
        raise ValueError("\n".join([UNKNOWN_KEYS[0], *problems, UNKNOWN_KEYS[1]]))


def panel_problems(panels: dict) -> list[str]:
    """Settings of panels that pass the schema but could never run, each as one readable line:
    a ``score_range`` whose low is not below its high would reject every score after the
    whole table was read, so it is named at start-up instead."""
    problems = []
    for name, panel in panels.items():
        try:
            check_score_range(panel.get("score_range"), f"panel '{name}'")
        except InputError as error:
            problems.append("  " + str(error).replace("\n  ", "\n    "))
    return problems
