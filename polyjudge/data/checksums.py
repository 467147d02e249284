"""Checksum manifests of input data: a file listed in a ``SHA256SUMS`` must match its digest.

The repository's ``data/SHA256SUMS`` (``sha256sum`` format, paths relative to its folder) is
written by ``data/convert.py``. Every reader of input files calls :func:`verify` first, so a
damaged or edited copy stops the run in the first step that reads it, before anything is written.
A file no manifest lists (a user's own data, the workflow's intermediates) passes unchecked.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from .errors import InputError

MANIFEST = "SHA256SUMS"


def sha256(path) -> str:
    """Hex SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def find_manifest(path) -> Path | None:
    """The first ``SHA256SUMS`` in the file's folder or its ancestors (None if there is none)."""
    folder = Path(os.path.abspath(path)).parent
    for candidate in (folder, *folder.parents):
        manifest = candidate / MANIFEST
        if manifest.is_file():
            return manifest
    return None


def read_manifest(manifest) -> dict[str, str]:
    """Relative path -> expected SHA-256 of a ``sha256sum`` file (text or ``*`` binary mode)."""
    entries = {}
    for line in Path(manifest).read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            digest, name = line.split(maxsplit=1)
            entries[name.lstrip("*").strip()] = digest.lower()
    return entries


def verify(path) -> None:
    """Raise :class:`~polyjudge.data.errors.InputError` if ``path`` is listed in its manifest
    with another digest; do nothing for a file no manifest lists."""
    manifest = find_manifest(path)
    if manifest is None:
        return
    relative = Path(os.path.abspath(path)).relative_to(manifest.parent).as_posix()
    expected = read_manifest(manifest).get(relative)
    if expected is None:
        return
    actual = sha256(path)
    if actual != expected:
        raise InputError(path, f"SHA-256 is {actual} but {manifest} lists {expected} for "
                         f"'{relative}': the file is damaged or was edited",
                         "the listed digest: restore the file (git checkout, or your mirror's "
                         "copy) or regenerate the folder with `python data/convert.py ORIGIN`")


def input_files(inputs: dict) -> dict:
    """Input name -> ``{path, sha256}`` (a file) or a list of them (a source of many files):
    the ``files`` of a panel's ``inputs.json``, shown on the results page as its provenance."""
    return {name: {"path": path, "sha256": sha256(path)} if isinstance(path, str)
            else [{"path": p, "sha256": sha256(p)} for p in path]
            for name, path in inputs.items()}
