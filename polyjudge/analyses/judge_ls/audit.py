"""Judge-LS translation audit (Judge-LS section 2.1) and the flip sensitivity to flagged items."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd

from ...data.errors import InputError, file_rows
from .metrics import flip_table
from .verdicts import ALL


@dataclass(frozen=True)
class AuditThresholds:
    """Audit thresholds of docs/methods.md section 8 (Judge-LS section 2.1); defaults are the
    paper's."""
    min_reference_numbers: int = 2        # lost numbers: reference has >= this many, variant none
    number_count_difference: int = 3     # number-count change: |difference| >= this
    length_ratio_full: float = 0.10       # shrinkage: variant/reference length below this ...
    length_ratio_code_switched: float = 0.35  # ... or this for code-switched variants


AUDIT_KINDS = {"full": "length_ratio_full", "code_switched": "length_ratio_code_switched"}
TEXT_KEYS = ["item", "subset", "field"]
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _text_table(texts: pd.DataFrame, source: str) -> pd.DataFrame:
    missing = [c for c in TEXT_KEYS + ["text"] if c not in texts.columns]
    if missing:
        raise InputError(source, f"missing column(s) {missing}", f"columns {TEXT_KEYS + ['text']}")
    out = texts[TEXT_KEYS + ["text"]].reset_index(drop=True).astype({k: str for k in TEXT_KEYS})
    repeated = out.duplicated(TEXT_KEYS, keep=False)
    if repeated.any():
        raise InputError(source, "repeated (item, subset, field)", "one text per field",
                         file_rows(out, repeated))
    return out


def translation_audit(reference_texts: pd.DataFrame, variant_texts: pd.DataFrame,
                      kind: str = "full", thresholds: AuditThresholds = AuditThresholds()
                      ) -> pd.DataFrame:
    """Flag risky translated fields (Judge-LS section 2.1, docs/methods.md section 8).

    Both tables have columns item, subset, field, text; every reference field is audited (a
    variant field that is absent counts as empty). ``kind`` is ``full`` (translation) or
    ``code_switched``. Numbers are digit runs (``12``, ``3.5``, ``1,000``; Unicode digits
    included, number words not). Columns of the result: item, subset, field, kind,
    reference_length, variant_length (characters, outer blanks stripped), length_ratio,
    reference_numbers, variant_numbers, and the flags empty (either text empty), lost_numbers
    (reference >= min_reference_numbers, variant none), number_count_change (counts differ by >=
    number_count_difference), shrinkage (length_ratio below the kind's threshold), flagged (any).
    """
    if kind not in AUDIT_KINDS:
        raise ValueError(f"kind must be one of {list(AUDIT_KINDS)}, got {kind!r}")
    ref = _text_table(reference_texts, "reference texts")
    var = _text_table(variant_texts, "variant texts")
    audit = ref.merge(var, on=TEXT_KEYS, how="left", suffixes=("_reference", "_variant"))
    ref_text = audit["text_reference"].fillna("").astype(str).str.strip()
    var_text = audit["text_variant"].fillna("").astype(str).str.strip()
    out = audit[TEXT_KEYS].assign(kind=kind, reference_length=ref_text.str.len(),
                                  variant_length=var_text.str.len())
    with np.errstate(divide="ignore", invalid="ignore"):
        out["length_ratio"] = out["variant_length"] / out["reference_length"].replace(0, np.nan)
    out["reference_numbers"] = ref_text.str.count(_NUMBER.pattern)
    out["variant_numbers"] = var_text.str.count(_NUMBER.pattern)
    out["empty"] = (out["reference_length"] == 0) | (out["variant_length"] == 0)
    out["lost_numbers"] = ((out["reference_numbers"] >= thresholds.min_reference_numbers)
                           & (out["variant_numbers"] == 0))
    out["number_count_change"] = ((out["reference_numbers"] - out["variant_numbers"]).abs()
                                  >= thresholds.number_count_difference)
    out["shrinkage"] = out["length_ratio"] < getattr(thresholds, AUDIT_KINDS[kind])
    out["flagged"] = out[["empty", "lost_numbers", "number_count_change", "shrinkage"]].any(axis=1)
    return out


def flip_sensitivity(frame: pd.DataFrame, flagged_items: pd.DataFrame, reference: str = "en",
                     confidence: float = 0.95) -> pd.DataFrame:
    """Flip table on all items and again without the flagged (item, subset) pairs.

    ``flagged_items`` has columns item and subset (e.g. ``audit.loc[audit.flagged, ["item",
    "subset"]]``). Result: the :func:`flip_table` columns plus ``items`` (``all`` or
    ``unflagged``) and ``n_excluded_items`` (distinct flagged items removed from the data).
    With every item flagged (a collection whose translations were all cut off) there are no
    ``unflagged`` rows.
    """
    keys = flagged_items[["item", "subset"]].astype(str).drop_duplicates()
    marked = frame.merge(keys.assign(_flagged=True), on=["item", "subset"], how="left")
    flagged = marked["_flagged"].eq(True).to_numpy()
    excluded = len(frame.loc[flagged, ["item", "subset"]].drop_duplicates())
    parts = [flip_table(frame, reference, confidence).assign(items=ALL, n_excluded_items=0)]
    rest = frame.loc[~flagged]
    if (rest["condition"] == reference).any():  # every item flagged: no unflagged rows
        parts.append(flip_table(rest, reference, confidence)
                     .assign(items="unflagged", n_excluded_items=excluded))
    return pd.concat(parts, ignore_index=True)


def audit_variants(reference_texts: pd.DataFrame, variants: Mapping[str, tuple],
                   thresholds: AuditThresholds = AuditThresholds()) -> pd.DataFrame:
    """:func:`translation_audit` of every variant, ``variants``: condition -> (texts, kind),
    stacked with a ``condition`` column; an empty frame when there are no variants."""
    frames = [translation_audit(reference_texts, texts, kind, thresholds).assign(condition=c)
              for c, (texts, kind) in variants.items()]
    if not frames:
        return pd.DataFrame(columns=["condition", *TEXT_KEYS, "flagged"])
    return pd.concat(frames, ignore_index=True)
