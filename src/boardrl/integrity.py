"""Content hashes of model and checkpoint files: recorded when a file is written, checked before it is read.

Why: a damaged file that still parses is worse than one that does not.  A 64-byte garble inside a torch
weights file loads without complaint and plays a much weaker game, and every number measured from it would
be recorded as good.  So every model and checkpoint file gets its size and sha256 recorded by the writer, and
the reader compares both before it parses a byte (a truncated file is named as such, and nothing is allocated
from a header that was never written by us).

A model directory carries its records in ``sha256.json`` (``seal_directory`` writes it last, after every other
file; ``verify_directory`` checks it first).  It lists every file of the directory, so a file added, removed,
truncated or changed afterwards is refused.  Hidden files (names starting with a dot: the atomic writers'
temporaries, an editor's litter) are never read by a loader and are not listed.  A checkpoint keeps the same
records inside its own manifest (``learn/core/checkpoint.py``), through ``file_record`` and ``check_file``.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from boardrl.atomic_io import atomic_write_json
from boardrl.errors import BoardRLError

HASH_FILE = "sha256.json"
FORMAT = 1
#: A hash manifest is a few hundred bytes; a larger one is not ours and is not parsed.
MAX_MANIFEST_BYTES = 1 << 20
_HEX64 = re.compile(r"[0-9a-f]{64}")
_CHUNK = 1 << 20


class IntegrityError(BoardRLError):
    """A file that does not match its recorded size and sha256 (or has none): ``path`` and ``reason`` apart."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = Path(path)
        self.reason = reason


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in chunks (tables of hundreds of MB are never held twice)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def file_record(path: Path) -> dict[str, Any]:
    """What a writer records of a file it has just written: ``{"bytes": size, "sha256": hex}``."""
    path = Path(path)
    return {"bytes": path.stat().st_size, "sha256": sha256_file(path)}


def valid_record(record: Any) -> bool:
    """Whether ``record`` has the shape ``file_record`` gives (a manifest may have been edited or garbled)."""
    return (isinstance(record, dict) and set(record) == {"bytes", "sha256"}
            and isinstance(record["bytes"], int) and not isinstance(record["bytes"], bool) and record["bytes"] >= 0
            and isinstance(record["sha256"], str) and _HEX64.fullmatch(record["sha256"]) is not None)


def check_file(path: Path, record: dict[str, Any]) -> None:
    """``IntegrityError`` unless ``path`` has exactly the recorded size and sha256 (size first: it is free)."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise IntegrityError(path, "missing (its content hash is recorded)") from None
    except OSError as exc:
        raise IntegrityError(path, f"cannot read it: {exc.strerror or exc}") from None
    if size < record["bytes"]:
        raise IntegrityError(path, f"shorter than written ({size} of {record['bytes']} bytes): truncated or changed")
    if size > record["bytes"]:
        raise IntegrityError(path, f"longer than written ({size} bytes, {record['bytes']} written): changed")
    try:
        digest = sha256_file(path)
    except OSError as exc:
        raise IntegrityError(path, f"cannot read it: {exc.strerror or exc}") from None
    if digest != record["sha256"]:
        raise IntegrityError(path, "its content does not match the sha256 recorded when it was written "
                                   "(the file is damaged)")


def _listed_files(directory: Path) -> list[str]:
    """Relative names of the files a hash manifest covers: every non-hidden file below ``directory``."""
    out = []
    for p in sorted(directory.rglob("*")):
        rel = p.relative_to(directory)
        if any(part.startswith(".") for part in rel.parts) or rel.as_posix() == HASH_FILE:
            continue
        if p.is_file():
            out.append(rel.as_posix())
    return out


def seal_directory(directory: Path) -> Path:
    """Write ``directory/sha256.json`` recording every file in it; call it last, after every other write.

    The content is a function of the files alone (sorted names, no times), so saving the same model twice gives
    the same bytes.
    """
    directory = Path(directory)
    files = {name: file_record(directory / name) for name in _listed_files(directory)}
    return atomic_write_json(directory / HASH_FILE, {"format": FORMAT, "algorithm": "sha256", "files": files})


def _read_manifest(directory: Path) -> dict[str, dict[str, Any]]:
    """The ``files`` records of ``directory/sha256.json``; ``IntegrityError`` when missing or malformed."""
    path = directory / HASH_FILE
    try:
        if path.stat().st_size > MAX_MANIFEST_BYTES:
            raise IntegrityError(path, f"larger than {MAX_MANIFEST_BYTES} bytes: not a boardrl hash manifest")
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise IntegrityError(path, "missing: the files were saved without content hashes, so they cannot be "
                                   "verified") from None
    except (OSError, ValueError, RecursionError) as exc:
        raise IntegrityError(path, f"unreadable: {exc}") from None
    files = data.get("files") if isinstance(data, dict) else None
    if (not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(files, dict)
            or not all(_safe_name(n) and valid_record(r) for n, r in files.items())):
        raise IntegrityError(path, "malformed: not a boardrl hash manifest of format 1")
    return files


def _safe_name(name: Any) -> bool:
    """A relative path inside the directory (a manifest must not make the reader hash files elsewhere)."""
    if not isinstance(name, str) or not name or name.startswith("/") or "\\" in name:
        return False
    return all(part not in ("", ".", "..") and not part.startswith(".") for part in name.split("/"))


def verify_directory(directory: Path) -> None:
    """``IntegrityError`` naming the first file that is missing, extra, truncated or changed since it was sealed."""
    directory = Path(directory)
    files = _read_manifest(directory)
    for name, record in sorted(files.items()):
        check_file(directory / name, record)
    extra = [name for name in _listed_files(directory) if name not in files]
    if extra:
        raise IntegrityError(directory / extra[0], f"not recorded in {HASH_FILE}: added after the model was saved")
