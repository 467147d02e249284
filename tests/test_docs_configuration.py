"""The configuration pages stay true to the config and its schema: every key of
config/config.yaml and of its schema is documented in docs/configuration.md, each setting in its
own section; every analysis, panel kind and held-out method is documented; and every YAML example
there is a valid configuration. Fast checks (no workflow run), like the rest of tests/test_docs.py.
"""
from __future__ import annotations

import re

import yaml

from test_docs import REPO, text


# Mappings whose keys are names the user chooses (panels, scenarios, groups, evaluator files,
# strata, text variants), not settings: their entries' names are not documented, their values'
# keys are.
COLLECTIONS = {"panels", "scenarios", "groups", "files", "per_stratum", "variant_texts"}


def code_tokens(markdown: str) -> set[str]:
    """Identifiers inside `code spans` and fenced blocks (where the docs name keys)."""
    spans = re.findall(r"```.*?```|`[^`\n]+`", markdown, flags=re.S)
    return {token for span in spans for token in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", span)}


# --- configuration -----------------------------------------------------------------------------

def config_keys(node, parent: str | None = None) -> set[str]:
    """Every key of a config mapping at every level, except the entry names of collections."""
    keys = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if parent not in COLLECTIONS:
                keys.add(str(key))
            keys |= config_keys(value, str(key))
    elif isinstance(node, list):
        for value in node:
            keys |= config_keys(value, parent)
    return keys


def schema_properties(node) -> set[str]:
    """Names under every ``properties`` of the JSON schema (every key it declares)."""
    names = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                names |= set(value)
            names |= schema_properties(value)
    elif isinstance(node, list):
        for value in node:
            names |= schema_properties(value)
    return names


def test_every_config_key_is_documented():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    keys = config_keys(config)
    assert {"data_dir", "panel_defaults", "eps", "n_values", "kind", "n_panels"} <= keys
    undocumented = sorted(keys - code_tokens(text("configuration.md")))
    assert not undocumented, f"config keys missing from docs/configuration.md: {undocumented}"


def test_every_setting_is_documented_in_its_own_section():
    """``cbc.eps`` must be named under the `cbc` heading, not just anywhere on the page."""
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    page = text("configuration.md")
    sections = re.split(r"^#{2,4} ", page, flags=re.M)
    checked = 0
    for top, value in config.items():
        if top in ("panels", "panel_defaults") or not isinstance(value, dict):
            continue
        section = [s for s in sections if s.startswith(f"`{top}`")]
        assert section, f"docs/configuration.md has no section headed `{top}`"
        undocumented = sorted(config_keys(value, top) - code_tokens(section[0]))
        assert not undocumented, f"`{top}` settings missing from its section: {undocumented}"
        checked += 1
    assert checked >= 10


def test_every_schema_key_is_documented():
    schema = yaml.safe_load((REPO / "config" / "schema" / "config.schema.yaml").read_text())
    names = schema_properties(schema)
    assert {"data_dir", "panels", "estimator", "variant_texts"} <= names
    undocumented = sorted(names - code_tokens(text("configuration.md")))
    assert not undocumented, f"schema keys missing from docs/configuration.md: {undocumented}"


def test_every_analysis_and_panel_kind_is_documented():
    schema = yaml.safe_load((REPO / "config" / "schema" / "config.schema.yaml").read_text())
    analyses = schema["$defs"]["analyses"]["items"]["enum"]
    kinds = schema["$defs"]["panel"]["properties"]["kind"]["enum"]
    tokens = code_tokens(text("configuration.md"))
    missing = sorted(set(analyses + kinds) - tokens)
    assert not missing, f"analyses / panel kinds missing from docs/configuration.md: {missing}"
    missing = sorted(set(analyses) - code_tokens(text("outputs.md")))
    assert not missing, f"analyses whose outputs docs/outputs.md does not name: {missing}"


def with_defaults(user: dict, defaults: dict) -> dict:
    """A user config completed as documented: ``panels`` (and the other collections) replace
    the defaults', every other setting left out comes from the defaults, a panel's from
    ``panel_defaults`` (a synthetic panel's model from ``simulation.base``)."""
    def fill(into, source):
        for key, value in source.items():
            if key not in into:
                into[key] = value
            elif (key not in COLLECTIONS and isinstance(value, dict)
                  and isinstance(into[key], dict)):
                fill(into[key], value)
    merged = dict(user)
    fill(merged, defaults)
    for panel in merged["panels"].values():
        fill(panel, merged["panel_defaults"])
        if panel["kind"] == "synthetic":
            fill(panel, merged["simulation"]["base"])
    return merged


def test_configuration_examples_are_valid_configurations():
    from snakemake.utils import validate
    defaults = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    examples = re.findall(r"```yaml\n(.*?)```", text("configuration.md"), flags=re.S)
    assert len(examples) >= 6
    for example in examples:
        config = with_defaults(yaml.safe_load(example), yaml.safe_load(yaml.safe_dump(defaults)))
        validate(config, str(REPO / "config" / "schema" / "config.schema.yaml"))


def test_every_heldout_method_is_documented():
    from polyjudge.analyses.baselines import METHODS
    for page in ("methods.md", "configuration.md"):
        missing = [name for name in METHODS if f"`{name}`" not in text(page)]
        assert not missing, f"held-out methods missing from docs/{page}: {missing}"
