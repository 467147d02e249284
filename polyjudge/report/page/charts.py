"""The page's charts as Vega-Lite specifications (a declarative grammar; rendered by vega-embed).

Colours are colour-blind safe: the Okabe-Ito palette of the figures for categories and Vega's
``blueorange`` diverging scheme (no red-green contrast) centred at 0 for beta. Fonts: the Noto
families, so Latin, CJK, Devanagari and Arabic labels render. Labels are data values of the
specs, never field names or expressions.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..palette import OKABE_ITO
from .results_folder import _records

FONT = ("Noto Sans, Noto Sans CJK SC, Noto Sans Devanagari, Noto Sans Arabic, "
        "DejaVu Sans, sans-serif")
DIVERGING = "blueorange"
CONFIG = {"font": FONT, "view": {"stroke": None}, "axis": {"labelLimit": 180},
          "range": {"category": list(OKABE_ITO)}}
SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json"


def _spec(body: dict, data: list[dict]) -> dict:
    return {"$schema": SCHEMA, "data": {"values": data}, "config": CONFIG, **body}


def _order(frame: pd.DataFrame, column: str) -> list:
    return [str(v) for v in pd.unique(frame[column])]


def _chart(cid: str, title: str, spec: dict) -> dict:
    return {"id": cid, "title": title, "spec": spec}


def rank_set_columns(frame: pd.DataFrame) -> tuple[str, str] | None:
    """Which rank intervals a leaderboard has, as (label, column suffix): the rank sets
    simultaneous over a language where present (the page shows those), else the marginal
    per-backbone intervals, else None."""
    for label, suffix in (("rank set (simultaneous)", "_simultaneous"),
                          ("rank interval (marginal)", "")):
        if {f"rank_{kind}{suffix}_{end}" for kind in ("raw", "cbc")
                for end in ("low", "high")} <= set(frame.columns):
            return label, suffix
    return None


def slopegraph(cid: str, rankings: pd.DataFrame) -> dict:
    """Rank of each backbone, raw -> after CBC, one small panel per language; the tooltip
    carries the rank set (simultaneous over the language) or, without it, the marginal rank
    interval, where the leaderboard has one (the page's language filter applies to it)."""
    intervals = rank_set_columns(rankings)
    label, suffix = intervals or ("", "")
    data = [{"language": str(r["language"]), "backbone": str(r["backbone"]), "stage": stage,
             "rank": int(r[key]),
             **({label: f"[{int(r[f'{key}{suffix}_low'])}, {int(r[f'{key}{suffix}_high'])}]"}
                if intervals else {})}
            for r in rankings.to_dict("records")
            for stage, key in (("raw", "rank_raw"), ("CBC", "rank_cbc"))]
    backbones = _order(rankings, "backbone")
    layer = {
        "encoding": {
            "x": {"field": "stage", "type": "nominal", "sort": ["raw", "CBC"], "title": None,
                  "axis": {"labelAngle": 0}},
            "y": {"field": "rank", "type": "quantitative", "scale": {"reverse": True,
                  "domain": [1, len(backbones)]},
                  "axis": {"values": list(range(1, len(backbones) + 1)), "format": "d"},
                  "title": "rank"},
            "color": {"field": "backbone", "type": "nominal", "sort": backbones},
            "shape": {"field": "backbone", "type": "nominal", "sort": backbones, "legend": None},
            "detail": {"field": "backbone"},
            "tooltip": [{"field": "language"}, {"field": "backbone"}, {"field": "stage"},
                        {"field": "rank", "type": "quantitative"},
                        *([{"field": label}] if intervals else [])]},
        "layer": [{"mark": {"type": "line"}}, {"mark": {"type": "point", "filled": True}}],
        "width": 110, "height": 110}
    spec = _spec({"facet": {"field": "language", "type": "nominal",
                            "sort": _order(rankings, "language"), "title": None},
                  "columns": 4, "spec": layer,
                  "resolve": {"scale": {"y": "shared"}, "axis": {"x": "independent"}}}, data)
    return _chart(cid, "How ranks move from raw to CBC", spec)


def label_decimals(values, significant: int = 2, least: int = 1, most: int = 6) -> int:
    """Decimals that show the largest |value| with ``significant`` digits, at least ``least``:
    a panel whose |beta| is at most 0.34 (margins) reads 0.34 and -0.08, not 0.3 and -0.1."""
    finite = np.abs(np.asarray(values, dtype=float))
    finite = finite[np.isfinite(finite)]
    largest = float(finite.max()) if finite.size else 0.0
    if largest == 0:
        return least
    return min(most, max(least, significant - 1 - math.floor(math.log10(largest))))


def heatmap(cid: str, beta: pd.DataFrame, changed=()) -> dict:
    """beta as a language x backbone heatmap; the tooltip carries the band when there is one.
    Cell labels have the decimals the panel's magnitude needs (:func:`label_decimals`), the
    tooltip two more.

    ``changed``: (language, backbone) cells outlined as changed (the compare page)."""
    keys = [k for k in ("language", "backbone", "beta", "se", "band_low", "band_high")
            if k in beta.columns]
    data = _records(beta, keys)
    changed = {(str(l), str(b)) for l, b in changed}
    for row in data:
        row["language"], row["backbone"] = str(row["language"]), str(row["backbone"])
        row["changed"] = (row["language"], row["backbone"]) in changed
    limit = float(beta["beta"].abs().max()) or 1.0
    decimals = label_decimals(beta["beta"])
    exact = f".{decimals + 2}f"
    tooltip = [{"field": "language"}, {"field": "backbone"},
               {"field": "beta", "type": "quantitative", "format": exact}]
    tooltip += [{"field": k, "type": "quantitative", "format": exact,
                 "title": {"band_low": "band low", "band_high": "band high"}.get(k, k)}
                for k in ("band_low", "band_high", "se") if k in keys]
    encoding = {"x": {"field": "backbone", "type": "nominal", "sort": _order(beta, "backbone"),
                      "title": None, "axis": {"labelAngle": -30}},
                "y": {"field": "language", "type": "nominal",
                      "sort": _order(beta, "language"), "title": None,
                      "axis": {"labelLimit": 400}}}
    spec = _spec({
        "encoding": encoding,
        "layer": [
            {"mark": {"type": "rect", "cursor": "pointer"},
             "params": [{"name": "cell", "select": {"type": "point", "on": "click",
                                                    "fields": ["language", "backbone"]}}],
             "encoding": {"color": {"field": "beta", "type": "quantitative",
                                    "scale": {"scheme": DIVERGING, "domainMid": 0,
                                              "domain": [-limit, limit]}},
                          "stroke": {"condition": {"test": "datum.changed", "value": "#000000"},
                                     "value": None},
                          "strokeWidth": {"condition": {"test": "datum.changed", "value": 3},
                                          "value": 0},
                          "tooltip": tooltip}},
            {"mark": {"type": "text", "fontSize": 10},  # pointer events go to the rect
             "encoding": {"text": {"field": "beta", "type": "quantitative",
                                   "format": f".{decimals}f"}}}],
        "width": {"step": 64}, "height": {"step": 26}}, data)
    return _chart(cid, "beta by language and backbone (click a cell)", spec)


def interval_chart(cid: str, frame: pd.DataFrame, y: str, x: str, low: str, high: str,
                   title: str) -> dict:
    """A dot per row of ``frame`` with its interval, rows in the file's order."""
    data = _records(frame, [y, x, low, high])
    spec = _spec({
        "encoding": {"y": {"field": y, "type": "nominal", "sort": _order(frame, y),
                           "title": None}},
        "layer": [{"mark": {"type": "rule", "color": OKABE_ITO[0]},
                   "encoding": {"x": {"field": low, "type": "quantitative", "title": title,
                                      # about 6 labels fit 360 px: at 0.1 steps -0.2 and -0.1 met
                                      "axis": {"tickCount": 6}},
                                "x2": {"field": high}}},
                  {"mark": {"type": "point", "filled": True, "color": OKABE_ITO[0]},
                   "encoding": {"x": {"field": x, "type": "quantitative"},
                                "tooltip": [{"field": y}, {"field": x, "format": ".3f"},
                                            {"field": low, "format": ".3f"},
                                            {"field": high, "format": ".3f"}]}}],
        "width": 360, "height": {"step": 18}}, data)
    return _chart(cid, title, spec)


STEP, MIN_STEP, FACET_MARGIN, PAGE_WIDTH = 22, 16, 70, 1180
"""Small multiples: pixels per condition (at most, and at least when filling a row), per panel
besides its conditions, and for one row."""


def _grid(n_charts: int, n_conditions: int) -> tuple[int, int]:
    """Columns and the width of each small panel: as many columns as fit at ``MIN_STEP`` a
    condition (at most 4), rows balanced, each panel widened to share the row but never past
    ``STEP`` a condition (three conditions stay narrow)."""
    columns = max(1, min(4, n_charts, PAGE_WIDTH // (n_conditions * MIN_STEP + FACET_MARGIN)))
    rows = -(-n_charts // columns)
    columns = -(-n_charts // rows)
    return columns, min(n_conditions * STEP, PAGE_WIDTH // columns - FACET_MARGIN)


def small_multiples(cid: str, frame: pd.DataFrame, x: str, y: str, low: str, high: str,
                    title: str, label: str | None = None) -> dict:
    """One small panel per judge: ``y`` with its interval per ``x`` (a condition), only the
    judge's own conditions, on one y scale. ``label``: the y axis title and tooltip name, the
    one its table column has (default ``y``)."""
    label = label or y
    data = _records(frame, ["judge", x, y, low, high])
    for row in data:
        row["judge"], row[x] = str(row["judge"]), str(row[x])
    conditions = _order(frame, x) if len(frame) else []
    judges = _order(frame, "judge") if len(frame) else []
    widest = (int(frame.groupby(frame["judge"].astype(str))[x].nunique().max())
              if len(frame) else 1)  # the most conditions one judge has
    columns, width = _grid(len(judges) or 1, widest)
    layer = {
        "encoding": {"x": {"field": x, "type": "nominal", "sort": conditions, "title": None},
                     "color": {"field": x, "type": "nominal", "sort": conditions,
                               "legend": None}},
        "layer": [{"mark": "rule", "encoding": {"y": {"field": low, "type": "quantitative",
                                                      "title": label}, "y2": {"field": high}}},
                  {"mark": {"type": "point", "filled": True},
                   "encoding": {"y": {"field": y, "type": "quantitative", "title": label},
                                "tooltip": [{"field": "judge"}, {"field": x},
                                            {"field": y, "format": ".3f", "title": label},
                                            {"field": low, "format": ".3f",
                                             "title": "interval low"},
                                            {"field": high, "format": ".3f",
                                             "title": "interval high"}]}}],
        "width": width, "height": 120}
    # one chart per judge (concatenated), so each shows only its own conditions and the rows
    # fill a 1,280 px page; a facet with independent x scales would warn in the console
    charts = [{"title": judge, "transform": [{"filter": {"field": "judge", "equal": judge}}],
               **layer} for judge in judges]
    spec = _spec({"concat": charts, "columns": columns,
                  "resolve": {"scale": {"y": "shared"}, "axis": {"x": "independent"}}}, data)
    return _chart(cid, title, spec)


NO_INTERVAL = "no interval yet"


def stopping_chart(cid: str, stopping: pd.DataFrame) -> dict:
    """The widest beta half-width after each round of a stopped collection (``stopping.csv``)
    against the items drawn, with the target as a dashed rule and the stopping round ringed.
    A round whose sequence has no interval yet (an infinite half-width) is an open triangle
    at the top of the axis labelled "no interval yet", so the axis stays finite."""
    width = pd.to_numeric(stopping["max_beta_halfwidth"], errors="coerce")
    target = (pd.to_numeric(stopping["target_beta_halfwidth"], errors="coerce").dropna()
              if "target_beta_halfwidth" in stopping else pd.Series(dtype=float))
    finite = width[np.isfinite(width)]
    top = max([*finite, *target, 0.0]) * 1.25 or 1.0
    data = []
    for row, value in zip(stopping.to_dict("records"), width):
        defined = bool(np.isfinite(value))
        data.append({"round": int(row["round"]), "items": int(row["items"]),
                     "calls": int(row["calls"]), "cost (USD)": round(float(row["cost_usd"]), 4),
                     "half-width": round(float(value), 4) if defined else NO_INTERVAL,
                     "shown": float(value) if defined else top,
                     "interval": "yes" if defined else NO_INTERVAL,
                     "stopped": "yes" if bool(row["stop"]) else "no",
                     "reason": str(row["reason"])})
    tooltip = [{"field": f} for f in ("round", "items", "calls", "cost (USD)", "half-width",
                                      "interval", "stopped", "reason")]
    x = {"field": "items", "type": "quantitative", "title": "items drawn",
         "axis": {"tickCount": 6}, "scale": {"padding": 12}}
    y = {"field": "shown", "type": "quantitative", "title": "widest beta half-width",
         "scale": {"domain": [0, top * 1.08], "nice": False}}
    defined_only = [{"filter": {"field": "interval", "equal": "yes"}}]
    layers = [
        {"transform": defined_only, "mark": {"type": "line", "color": OKABE_ITO[0]},
         "encoding": {"x": x, "y": y}},
        {"transform": defined_only, "mark": {"type": "point", "filled": True, "size": 50,
                                             "color": OKABE_ITO[0]},
         "encoding": {"x": x, "y": y, "tooltip": tooltip}},
        {"transform": [{"filter": {"field": "interval", "equal": NO_INTERVAL}}],
         "mark": {"type": "point", "shape": "triangle-up", "size": 80, "color": "#555"},
         "encoding": {"x": x, "y": y, "tooltip": tooltip}},
        {"transform": [{"filter": {"field": "interval", "equal": NO_INTERVAL}}],
         "mark": {"type": "text", "align": "left", "dx": 8, "fontSize": 11, "color": "#555"},
         "encoding": {"x": x, "y": y, "text": {"field": "interval"}}},
        {"transform": [{"filter": {"field": "stopped", "equal": "yes"}}],
         "mark": {"type": "point", "size": 260, "strokeWidth": 1.5, "color": "#333"},
         "encoding": {"x": x, "y": y}}]
    if len(target):
        layers.append({"mark": {"type": "rule", "strokeDash": [4, 3], "color": "#777"},
                       "encoding": {"y": {"datum": float(target.iloc[0])}}})
    spec = _spec({"layer": layers, "width": 360, "height": 200}, data)
    return _chart(cid, "Widest beta half-width after each round (dashed: the target)", spec)
