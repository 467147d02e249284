"""Writing a file all at once: a failure leaves no partial file, and the file gets the mode a
plain ``open()`` gives (Calibrator files, `polyjudge apply` tables)."""
from __future__ import annotations

import os
import secrets
from pathlib import Path


def write_atomically(path, write) -> None:
    """``write(temporary_path)``, then rename it to ``path``: a failure leaves no partial file.

    The temporary file is created with mode 0666 less the umask, as ``open(path, "w")`` would
    create ``path`` (``tempfile.mkstemp`` would give 0600: colleagues could not read it)."""
    path = Path(path)
    while True:
        temporary = path.parent / f".{path.name}.{secrets.token_hex(4)}{path.suffix}"
        try:
            os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            break
        except FileExistsError:  # another writer's temporary file: draw another name
            continue
    try:
        write(temporary)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
