"""The claims table: every published value beside the value the pipeline reproduced.

Published values live in one reviewed file (``config/claims.yaml``), each with its source and a
tolerance; reproduced values are read from the pipeline's outputs through a selector, never
typed in. A claim is ``reproduced`` when ``|reproduced - published| <= tolerance`` (or, for a
target with ``bound: upper`` / ``lower``, when the value is at most / at least the published one,
give or take the tolerance), ``differs`` otherwise, and ``not computed`` when its output does not
exist (yet) or has no such value.

Selectors (``select`` in a claim):

* JSON output: ``{key: "a.b.c"}``, a dotted path into the object (integers index lists);
  with ``equals: value`` the claim's value is 1 if the entry equals it, else 0.
* CSV/Parquet output: ``{where: {column: value, ...}, column: name}``: the single matching row's
  value; ``aggregate: count | max_abs | mean | min | sum`` over the matching rows instead.
* ``{compare: {...}}``: the largest absolute difference between a column of the output and the
  same quantity in a published table (``published``, relative to ``data_dir``), matched on
  ``keys``; a wide published matrix is melted first (``wide_index``: its row-label column, the
  other columns are the second key); ``labels`` maps published labels to the pipeline's
  (``{key: {published: ours}}``). The claim's published value is then 0.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd

from ..data.checksums import verify as verify_checksum

STATUSES = ("reproduced", "differs", "not computed")
CLAIM_COLUMNS = ["id", "section", "quantity", "published", "reproduced", "difference",
                 "tolerance", "status", "source", "output", "note"]


class ClaimError(ValueError):
    """A claim's definition is wrong (not a reproduction failure)."""


def _json_value(data, dotted: str):
    value = data
    for part in dotted.split("."):
        if isinstance(value, list):
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return None
    return value


def _csv_value(frame: pd.DataFrame, select: dict):
    rows = frame
    for column, wanted in (select.get("where") or {}).items():
        if column not in rows.columns:
            raise ClaimError(f"column {column!r} not in the output (has {list(rows.columns)})")
        rows = rows[rows[column].astype(str) == str(wanted)]
    column = select.get("column")
    aggregate = select.get("aggregate")
    if aggregate == "count":
        return float(len(rows))
    if column not in rows.columns:
        raise ClaimError(f"column {column!r} not in the output (has {list(rows.columns)})")
    values = rows[column]
    if aggregate == "max_abs":
        return float(values.abs().max())
    if aggregate == "mean":
        return float(values.mean())
    if aggregate == "min":
        return float(values.min())
    if aggregate == "sum":
        return float(values.sum())
    if len(values) != 1:
        return None
    return values.iloc[0]


def _read(path: Path) -> pd.DataFrame:
    return pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)


def _compare_value(frame: pd.DataFrame, spec: dict, data_dir: Path) -> float | None:
    verify_checksum(data_dir / spec["published"])
    published = pd.read_csv(data_dir / spec["published"])
    keys = spec["keys"]
    if "wide_index" in spec:
        published = published.melt(id_vars=spec["wide_index"], var_name=keys[1],
                                   value_name="published").rename(
            columns={spec["wide_index"]: keys[0]})
    else:
        published = published.rename(columns={spec["published_column"]: "published"})
    for key, mapping in (spec.get("labels") or {}).items():
        published[key] = published[key].astype(str).replace(mapping)
    for key in keys:
        published[key] = published[key].astype(str)
        frame = frame.assign(**{key: frame[key].astype(str)})
    merged = frame.merge(published[keys + ["published"]], on=keys, how="inner")
    if len(merged) != len(published):
        raise ClaimError(f"only {len(merged)} of {len(published)} published rows of "
                         f"{spec['published']} match the output on {keys}")
    return float((merged[spec["column"]] - merged["published"]).abs().max())


def reproduced_value(output: Path, select: dict, data_dir=Path(".")):
    """The value a claim's selector picks from a pipeline output, or None if not there."""
    if not output.is_file():
        return None
    if "compare" in select:
        value = _compare_value(_read(output), select["compare"], Path(data_dir))
    elif output.suffix == ".json":
        value = _json_value(json.loads(output.read_text()), select["key"])
        if "equals" in select and value is not None:
            value = float(value == select["equals"])
    else:
        value = _csv_value(_read(output), select)
    if isinstance(value, bool):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def evaluate_claims(claims: list[dict], root=".", data_dir=".", produced=None) -> pd.DataFrame:
    """One row per claim with the reproduced value, the difference and the status.

    ``produced``: the outputs this run made (None: any file present); a claim whose output is
    not among them is ``not computed``, even if a file of that name is left from another run.
    """
    rows = []
    for claim in claims:
        output = Path(root) / claim["output"]
        try:
            value = (None if produced is not None and claim["output"] not in produced
                     else reproduced_value(output, claim["select"], data_dir))
        except (ClaimError, KeyError) as error:
            raise ClaimError(f"claim {claim['id']!r} ({claim['output']}): {error}") from error
        published = 0.0 if "compare" in claim["select"] else float(claim["published"])
        tolerance = float(claim["tolerance"])
        if value is None or math.isnan(value):
            status, difference = "not computed", None
        else:
            difference = value - published
            allowed = {"upper": difference <= tolerance, "lower": difference >= -tolerance}
            within = allowed.get(claim.get("bound"), abs(difference) <= tolerance + 1e-12)
            status = "reproduced" if within else "differs"
        rows.append({"id": claim["id"], "section": claim["section"],
                     "quantity": claim["quantity"], "published": published,
                     "reproduced": value, "difference": difference, "tolerance": tolerance,
                     "status": status, "source": claim["source"], "output": claim["output"],
                     "note": claim.get("note", "")})
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)


def section_number(section: str) -> tuple:
    """Sort key of a claim's section by its leading number ("10.2 Parse failures" -> (10, 2));
    a section without one sorts last."""
    match = re.match(r"(\d+(?:\.\d+)*)\b", str(section))
    return (0, *map(int, match.group(1).split("."))) if match else (1,)


def claims_markdown(table: pd.DataFrame) -> str:
    """The claims table rendered for people: a status count and one line per claim, the
    sections in the order of their numbers (those of docs/methods.md). The claims belong to the
    default reproduction; when none of its outputs was made (a user's own panels), the file
    says so instead of listing every claim as not computed."""
    counts = table["status"].value_counts()
    if counts.get("not computed", 0) == len(table):
        return ("# Reproduction claims\n\nThe claims table compares the default reproduction "
                "(the panels of config/config.yaml) with the published values of the CBC and "
                f"Judge-LS papers. None of its {len(table)} claims was checked: this "
                "configuration does not run the panels they are computed on. Your own panels' "
                "results are in results/<panel>/ (docs/outputs.md); to check the claims, run the "
                "default configuration (`snakemake --cores 2`, no --configfile).\n")
    verbs = {"differs": "differ"}  # "2 differ", not "2 differs"
    head = ", ".join(f"{counts.get(s, 0)} {verbs.get(s, s)}" for s in STATUSES)
    quantities = "quantity" if len(table) == 1 else "quantities"
    lines = [f"# Reproduction claims\n\n{len(table)} published {quantities} of the default "
             f"reproduction: {head}.\n",
             "| section | quantity | published | reproduced | difference | tol | status | note |",
             "|---|---|---|---|---|---|---|---|"]
    fmt = lambda v: "" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.4g}"
    cell = lambda text: str(text).replace("|", "\\|")
    order = sorted(range(len(table)), key=lambda i: section_number(table["section"].iloc[i]))
    for row in table.iloc[order].itertuples():
        lines.append(f"| {cell(row.section)} | {cell(row.quantity)} | {fmt(row.published)} | "
                     f"{fmt(row.reproduced)} | {fmt(row.difference)} | {fmt(row.tolerance)} | "
                     f"{row.status} | {cell(row.note)} |")
    return "\n".join(lines) + "\n"
