"""The calibrator file read and checked before a :class:`polyjudge.Calibrator` is rebuilt from
it: found, JSON, of this format, not from a newer one, and its checksum matching its content."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

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
