"""Human labels of a panel's items: read, checked, and several annotators' labels combined.

A label table has one row per label: ``item``, ``language`` and ``label``, and optionally
``annotator`` (who gave it) and ``probability`` (the known probability with which the item was
chosen for labelling; uniform sampling when absent). It is read from the same kinds of source as
runs (a file, folder, glob or list; a mapping with ``path``, ``template``, ``partitioning``:
:mod:`polyjudge.data.sources`), and every check names the file, the row and the column.

Labels of items whose text is the same in every language (the human verdict of a DevAI
requirement does not depend on the language the judge read it in) may come without a language:
``language="*"`` gives every label to every language of the panel in which the item is judged.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import column_names
from .errors import InputError, file_rows
from .sources import read_source, source_inputs

STANDARD = ("item", "language", "label", "annotator", "probability")
"""The columns of a label table after reading (``annotator`` and ``probability`` when given)."""
EVERY_LANGUAGE = "*"
"""``language`` for labels that hold in every language of the panel."""
HOW = ("mean", "majority", "first")
"""How :func:`average_annotators` combines the labels of several annotators of one item."""
ITEM_SEPARATOR = "|"  # as the judge card's item keys (framework|task|requirement_id)


def read_human_labels(source, *, items=None, score_range=None, columns=None, where=None,
                      language=None, unknown_items="error", base_dir=None) -> pd.DataFrame:
    """Read and check a table of human labels.

    Parameters
    ----------
    source : path, glob, list or table-source mapping
        As a panel's ``runs`` (:mod:`polyjudge.data.sources`); relative to ``base_dir``.
    items : iterable of str or DataFrame, optional
        The panel's items (labels of other items are refused), or a DataFrame with ``item``
        and ``language`` (the pairs the panel judges: a label must name one of them).
    score_range : (low, high), optional
        The human scale's bounds; a label outside is refused.
    columns : dict, optional
        Standard name -> the file's column. ``item`` may name a list of columns, joined with
        ``|`` into one key (``[framework, task, requirement_id]``, as the judge card's items).
    where : dict, optional
        Column -> value (or list of values): keep only these rows (a file holding several
        raters' labels, e.g. ``{judge: human}``).
    language : str, optional
        For a file without a language column: the language of every label, or ``"*"`` (every
        language of the panel; expanded to each language ``items`` pairs the item with).
    unknown_items : {"error", "drop"}
        A label of an item the panel lacks stops the reading (default), or is left out
        (``attrs["dropped"]`` counts them), for a label file known to cover more items.

    Returns
    -------
    DataFrame with ``item``, ``language``, ``label`` (float) and, when present, ``annotator``
    (text) and ``probability`` (float in (0, 1]), in file order.

    Raises
    ------
    InputError
        Naming the file, the rows (file:line) and the column: a missing column, an empty item or
        language, a label that is not a number or is outside ``score_range``, a probability
        outside (0, 1], a second label of one item, language and annotator, a label of an item
        (or item and language) the panel lacks.
    """
    mapping = dict(columns or {})
    item_columns = mapping.pop("item", "item")
    item_columns = [item_columns] if isinstance(item_columns, str) else list(item_columns)
    if len(item_columns) == 1:
        mapping["item"] = item_columns[0]
    keep = {str(k): v for k, v in (where or {}).items()}
    files = source_inputs(source, base_dir)
    text = ("item", "language", "annotator", *(c for c in item_columns if c != "item"),
            *keep)
    optional = tuple(c for c in ("annotator", "probability") if c not in mapping)
    required = ["label"] + (["item"] if len(item_columns) == 1 else item_columns)
    if language is None:
        required.append("language")
    fields = (tuple(required) + tuple(k for k in keep if k not in required),
              tuple(c for c in ("annotator", "probability") if c in mapping) + optional)
    frame = read_source(source, files, mapping or None, fields=fields, text=text)
    where_label = source if isinstance(files, str) else _label(source)
    absent = [c for c in required + list(keep) if c not in frame.columns]
    if absent:
        shown = {**mapping, **({"item": item_columns} if len(item_columns) > 1 else {})}
        raise InputError(where_label, f"no column(s) {absent} (the file has "
                         f"{column_names.file_columns(frame.columns, mapping)})",
                         "a label table with item, language and label columns (and optionally "
                         "annotator, probability); map your own names with `columns` "
                         f"(here {shown or 'none'}), or give `language` for a file without one")
    attrs = dict(frame.attrs)
    for name, values in keep.items():
        wanted = [values] if isinstance(values, (str, int, float)) else list(values)
        frame = frame[frame[name].astype(str).isin([str(v) for v in wanted])]
    frame.attrs.update(attrs)
    if len(item_columns) > 1:
        frame = frame.assign(item=frame[item_columns].astype(str).agg(ITEM_SEPARATOR.join,
                                                                       axis=1))
        frame.attrs.update(attrs)
    if language is not None:
        frame = frame.assign(language=str(language))
        frame.attrs.update(attrs)
    if not len(frame):
        raise InputError(where_label, "holds no label" + (f" where {keep}" if keep else ""),
                         "one row per human label")
    labels = _checked(frame, where_label, mapping, score_range)
    labels = _known_items(labels, frame, items, where_label, mapping, unknown_items)
    dropped = labels.attrs.get("dropped", 0)
    labels = labels.reset_index(drop=True)
    labels.attrs = {"dropped": dropped}
    return labels


def _label(source) -> str:
    from .sources import describe
    return describe(source)


def _fail(where, problem, expected, frame, mask, mapping):
    shown = [c for c in frame.columns if c in (*STANDARD, *mapping.values())]
    rows = column_names.user_rows(file_rows(frame, mask, shown), mapping)
    return InputError(where, f"{int(np.sum(mask))} {problem}", expected, rows,
                      n_rows=int(np.sum(mask)))


def _checked(frame: pd.DataFrame, where, mapping: dict, score_range) -> pd.DataFrame:
    """The label table in standard form; stops at the first failed check."""
    for name in ("item", "language"):
        empty = frame[name].isna() | (frame[name].astype(str).str.strip() == "")
        if empty.any():
            raise _fail(where, f"row(s) with an empty {name}"
                        f"{column_names.in_column(name, mapping)}",
                        f"a {name} in every row", frame, empty, mapping)
    label = pd.to_numeric(frame["label"], errors="coerce")
    bad = label.isna() | ~np.isfinite(label)
    if bad.any():
        raise _fail(where, f"label(s) that are not finite numbers"
                    f"{column_names.in_column('label', mapping)}",
                    "a number on the human scale in every row (a missing label is a row left "
                    "out, not an empty cell)", frame, bad, mapping)
    if score_range is not None:
        low, high = (float(x) for x in score_range)
        outside = (label < low) | (label > high)
        if outside.any():
            raise _fail(where, f"label(s) outside the score range [{score_range[0]}, "
                        f"{score_range[1]}]{column_names.in_column('label', mapping)}",
                        "labels on the panel's scale (its score_range)", frame, outside,
                        mapping)
    out = pd.DataFrame({"item": frame["item"].astype(str).str.strip(),
                        "language": frame["language"].astype(str).str.strip(),
                        "label": label.astype(float)}, index=frame.index)
    if "annotator" in frame.columns:
        out["annotator"] = frame["annotator"].astype(str).where(frame["annotator"].notna(), "")
    if "probability" in frame.columns:
        p = pd.to_numeric(frame["probability"], errors="coerce")
        bad = p.isna() | ~(p > 0) | ~(p <= 1)
        if bad.any():
            raise _fail(where, f"probability(ies) outside (0, 1]"
                        f"{column_names.in_column('probability', mapping)}",
                        "the probability with which each item was chosen for labelling, "
                        "above 0 and at most 1", frame, bad, mapping)
        out["probability"] = p.astype(float)
    key = ["item", "language"] + (["annotator"] if "annotator" in out else [])
    twice = out.duplicated(key, keep=False).to_numpy()
    if twice.any():
        who = " and annotator" if "annotator" in out else ""
        raise _fail(where, f"rows give a second label of one item, language{who}",
                    f"one label per item, language{who} (several annotators of one item: an "
                    "annotator column)", frame, twice, mapping)
    return out


def _known_items(labels: pd.DataFrame, frame: pd.DataFrame, items, where, mapping: dict,
                 unknown_items: str = "error") -> pd.DataFrame:
    """Refuse labels of items the panel lacks; expand ``*`` to the item's languages."""
    if items is None:
        return labels
    if isinstance(items, pd.DataFrame):
        pairs = items[["item", "language"]].astype(str).drop_duplicates()
        known = set(pairs["item"])
    else:
        pairs, known = None, {str(i) for i in items}
    unknown = ~labels["item"].isin(known).to_numpy()
    if unknown_items not in ("error", "drop"):
        raise ValueError(f"unknown_items must be 'error' or 'drop', got {unknown_items!r}")
    dropped = int(unknown.sum()) if unknown_items == "drop" else 0
    if dropped:
        labels, frame, unknown = labels[~unknown], frame[~unknown], unknown[~unknown]
    if unknown.any():
        example = ", ".join(sorted(known)[:3])
        raise _fail(where, f"label(s) of items the panel lacks"
                    f"{column_names.in_column('item', mapping)}",
                    f"labels of the panel's items only (e.g. {example})", frame, unknown, mapping)
    if pairs is None:
        labels.attrs["dropped"] = dropped
        return labels
    every = labels["language"] == EVERY_LANGUAGE
    own = labels[~every]
    missing = ~np.asarray(pd.MultiIndex.from_frame(own[["item", "language"]]).isin(
        pd.MultiIndex.from_frame(pairs)))
    if missing.any():
        raise _fail(where, "label(s) of an item in a language the panel does not judge it in",
                    "item and language pairs of the panel (or language '*' for every "
                    "language)", frame.loc[own.index], missing, mapping)
    spread = labels[every].drop(columns="language").merge(pairs, on="item", how="inner")
    out = pd.concat([own, spread[labels.columns]], ignore_index=True)
    key = ["item", "language"] + (["annotator"] if "annotator" in out else [])
    if out.duplicated(key).any():
        raise InputError(where, "an item has a label for language '*' and one for its own "
                         "language from the same annotator", "one label per item, language "
                         "and annotator")
    out.attrs["dropped"] = dropped
    return out


def average_annotators(labels: pd.DataFrame, how: str = "mean") -> pd.DataFrame:
    """One label per item and language from several annotators' labels.

    ``how``: ``"mean"`` (the annotators' mean), ``"majority"`` (the most frequent label; a tie
    takes the mean of the tied labels, so two annotators saying 0 and 1 give 0.5) or ``"first"``
    (the first label in file order). Returns ``item``, ``language``, ``label``,
    ``n_annotators`` and ``probability`` where the table has it (the item's first). A table
    without annotators is returned with ``n_annotators`` 1.
    """
    if how not in HOW:
        raise ValueError(f"how must be one of {HOW}, got {how!r}")
    key = ["item", "language"]
    grouped = labels.groupby(key, sort=False)
    out = grouped.size().rename("n_annotators").reset_index()
    if how == "mean":
        value = grouped["label"].mean()
    elif how == "first":
        value = grouped["label"].first()
    else:
        counts = labels.groupby(key + ["label"], sort=False).size().rename("n").reset_index()
        top = counts.groupby(key, sort=False)["n"].transform("max")
        value = counts[counts["n"] == top].groupby(key, sort=False)["label"].mean()
    out = out.merge(value.rename("label").reset_index(), on=key)
    if "probability" in labels:
        out = out.merge(grouped["probability"].first().reset_index(), on=key)
    return out[key + ["label", "n_annotators"] + (["probability"] if "probability" in labels
                                                   else [])]
