"""The calibrator file read and checked before a :class:`polyjudge.Calibrator` is rebuilt from
it: found, JSON, of this format, not from a newer one, and its checksum matching its content;
and a calibrator's settings and cells as the file's JSON values and back."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import InputError

FORMAT = "polyjudge-calibrator"
FORMAT_VERSION = 1
EXPECTED_FILE = "a calibrator file written by Calibrator.save or `polyjudge fit`"


def checksum(document: dict) -> str:
    """SHA-256 of the canonical JSON (sorted keys, no spaces) of ``document`` without its
    ``checksum`` field."""
    body = {key: value for key, value in document.items() if key != "checksum"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_calibrator_file(path) -> dict:
    """The document of a calibrator file; refuses (:class:`~polyjudge.data.errors.InputError`
    naming the file) one that is not a calibrator, comes from a newer format or whose checksum
    no longer matches its content."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "file not found", EXPECTED_FILE)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(path, f"is not a calibrator file: not JSON ({error})", EXPECTED_FILE)
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise InputError(path, f"is not a calibrator file: no \"format\": \"{FORMAT}\"",
                         EXPECTED_FILE)
    version = document.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InputError(path, f"has an invalid format_version {version!r}", EXPECTED_FILE)
    if version > FORMAT_VERSION:
        raise InputError(path, f"written by a newer polyjudge (format {version}); this polyjudge "
                         f"reads format {FORMAT_VERSION}: upgrade",
                         f"format_version {FORMAT_VERSION} or lower, or a newer polyjudge "
                         "(pip install --upgrade polyjudge)")
    if document.get("checksum") != checksum(document):
        raise InputError(path, "its checksum does not match its content: the file was edited "
                         "or damaged", f"{EXPECTED_FILE}, unchanged (fit again to change it)")
    return document


BAND_COLUMNS = ("se", "band_low", "band_high")


def settings_to_file(settings: dict) -> dict:
    """A calibrator's settings as JSON values: ``score_range`` floats, axis labels strings."""
    settings = dict(settings)
    if settings["score_range"] is not None:
        settings["score_range"] = [float(x) for x in settings["score_range"]]
    for axis in ("languages", "backbones"):
        if settings[axis] is not None:
            settings[axis] = [str(label) for label in settings[axis]]
    return settings


def settings_from_file(settings: dict) -> dict:
    """:func:`settings_to_file` undone: ``score_range`` a tuple, axis orders lists."""
    settings = dict(settings)
    if settings.get("score_range") is not None:
        settings["score_range"] = tuple(settings["score_range"])
    for axis in ("languages", "backbones"):
        if settings.get(axis) is not None:
            settings[axis] = list(settings[axis])
    return settings


def cells_to_file(beta: pd.DataFrame, band: bool) -> list[dict]:
    """One JSON object per row of a calibrator's ``beta_`` (with the band's columns if
    ``band``)."""
    cells = []
    for row in beta.itertuples(index=False):
        cell = {"language": str(row.language), "backbone": str(row.backbone),
                "beta": float(row.beta), "n_runs": int(row.n_runs), "n_tasks": int(row.n_tasks)}
        if band:
            cell.update({name: float(getattr(row, name)) for name in BAND_COLUMNS})
        cells.append(cell)
    return cells


def cells_from_file(document: dict) -> pd.DataFrame:
    """The ``beta_`` table of a calibrator document; its cells must list every language x
    backbone pair in the order of its languages and backbones (ValueError otherwise)."""
    cells = document["cells"]
    columns = ["language", "backbone", "beta", "n_runs", "n_tasks"] + (
        list(BAND_COLUMNS) if document["band"] is not None else [])
    beta = pd.DataFrame({name: [cell[name] for cell in cells] for name in columns})
    for name in columns[2:]:
        beta[name] = beta[name].astype(np.int64 if name in ("n_runs", "n_tasks") else float)
    grid = np.meshgrid(list(document["languages"]), list(document["backbones"]), indexing="ij")
    if (list(beta["language"]) != list(grid[0].ravel())
            or list(beta["backbone"]) != list(grid[1].ravel())):
        raise ValueError("cells must list every language x backbone pair in the order of "
                         "languages and backbones")
    return beta
