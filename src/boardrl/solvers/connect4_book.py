"""Connect 4 opening book: the exact score of every legal, unfinished position with at most D stones.

Why: a search from a position with few stones is slow (the empty board takes minutes, 8-stone positions up to
a few seconds), while the referee should answer any position within a second.  The book stores the exact score
(the solver's convention, ``solvers/connect4.py``) of every position the game can reach after at most ``D``
plies whose game is still on, so ``Connect4Solver`` answers those by a lookup and searches only deeper
positions (where searches are fast).

Keys: the solver's unique key ``current + mask`` (7 bits per column, no carries), made canonical under the
left-right mirror: ``min(key, mirrored key)``.  Mirroring a key mirrors the position, so the book stores one
of each mirror pair and lookups canonicalise first; this halves the book.

Building and verifying: ``solvers/connect4_book_build.py`` (``build_book``, ``verify_book``; ``boardrl book
build`` and ``verify``).  They search with ``Connect4Solver``, which answers from the book loaded here; this
module holds what reading and answering need and imports no solver, so the two do not import each other.

File: a ``.npz`` (a zip written with fixed timestamps, so equal books are equal bytes) holding ``key_deltas``
(the sorted canonical keys as uint64 differences from the previous key: small numbers compress well),
``scores`` (int8, same order) and ``plies``; beside it a JSON with its sha256, count, plies, build seconds,
processes and the solver's fingerprint.  Loading checks the sha256 and fails with one line naming the file
when it differs.  D = 8 is 129,498 entries (91,295 at ply 8), about 0.1 MB.  The packaged book is that one,
committed at ``solvers/book/connect4-8ply.npz`` (``default_path``); the solver and referee load it when present.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from boardrl.atomic_io import atomic_write_bytes, atomic_write_json
from boardrl.errors import BoardRLError

WIDTH = 7
H1 = 7  # bits per column: 6 cells and the sentinel
COL_BITS = (1 << H1) - 1

BOOK_DIR = Path(__file__).resolve().parent / "book"
DEFAULT_PLIES = 8
FORMAT_VERSION = 1
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


class BookError(BoardRLError):
    """A book file that is missing its metadata, fails its checksum, or holds something unexpected."""


def default_path(plies: int = DEFAULT_PLIES) -> Path:
    """The book file shipped in the package for ``plies``."""
    return BOOK_DIR / f"connect4-{plies}ply.npz"


def meta_path(path: str | os.PathLike) -> Path:
    """The JSON beside a book file: ``connect4-8ply.npz`` -> ``connect4-8ply.json``."""
    return Path(path).with_suffix(".json")


# ---------------------------------------------------------------------------------------------- keys and mirror
def mirror_bits(bits):
    """Mirror a bitboard or key (int or int64 array) left-right: column c goes to column 6 - c."""
    out = bits & 0  # keeps the type: 0 or an array of zeros
    for c in range(WIDTH):
        out = out | (((bits >> (H1 * c)) & COL_BITS) << (H1 * (WIDTH - 1 - c)))
    return out


def position_key(cur: int, mask: int) -> int:
    """The solver's unique key of a position."""
    return int(cur) + int(mask)


def canonical_key(cur: int, mask: int) -> int:
    """``min(key, mirrored key)``: one key for a position and its mirror image."""
    k = int(cur) + int(mask)
    return min(k, mirror_bits(k))


def decode_key(key: int) -> tuple[int, int, int]:
    """``(current, mask, plies)`` of a key (the inverse of ``position_key``)."""
    key = int(key)
    cur = mask = 0
    for c in range(WIDTH):
        v = (key >> (H1 * c)) & COL_BITS
        h = (v + 1).bit_length() - 1  # a column of h stones has v in [2**h - 1, 2**(h+1) - 2]
        m = (1 << h) - 1
        mask |= m << (H1 * c)
        cur |= (v - m) << (H1 * c)
    return cur, mask, bin(mask).count("1")


# ---------------------------------------------------------------------------------------------- the book
@dataclass
class OpeningBook:
    """Exact scores by canonical key; ``score`` answers positions with at most ``plies`` stones."""

    plies: int
    keys: np.ndarray  # sorted canonical keys, uint64
    scores: np.ndarray  # int8, same order
    path: Path | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.keys.shape[0])

    def score(self, cur: int, mask: int) -> int | None:
        """The exact score of the position for the side to move, or None when the book does not hold it."""
        k = np.uint64(canonical_key(cur, mask))
        i = int(np.searchsorted(self.keys, k))
        if i < self.keys.shape[0] and self.keys[i] == k:
            return int(self.scores[i])
        return None

    def entries(self) -> list[tuple[int, int, int, int]]:
        """Every entry as ``(current, mask, plies, score)`` (the canonical one of each mirror pair)."""
        return [(*decode_key(int(k)), int(s)) for k, s in zip(self.keys, self.scores)]


def _npy_bytes(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asarray(array, order="C"), allow_pickle=False)
    return buf.getvalue()


def encode_book(book: OpeningBook) -> bytes:
    """The ``.npz`` bytes of a book: the same book always gives the same bytes (fixed zip timestamps)."""
    keys = np.asarray(book.keys, dtype=np.uint64)
    deltas = np.diff(keys, prepend=np.uint64(0))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name, arr in (("plies", np.array(book.plies, dtype=np.int64)), ("key_deltas", deltas),
                          ("scores", np.asarray(book.scores, dtype=np.int8))):
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, _npy_bytes(arr), compresslevel=9)
    return buf.getvalue()


def _sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def solver_fingerprint() -> str:
    """sha256 (12 hex digits) of the solver's source, recorded in the metadata (informative only)."""
    src = Path(__file__).resolve().parent / "connect4.py"
    return _sha256_bytes(src.read_bytes())[:12]


def save_book(book: OpeningBook, path: str | os.PathLike, **meta: Any) -> dict[str, Any]:
    """Write the book and its JSON (sha256, count, plies, and ``meta``); returns the JSON's contents."""
    data = encode_book(book)
    info = {"format": FORMAT_VERSION, "plies": int(book.plies), "count": len(book), "bytes": len(data),
            "sha256": _sha256_bytes(data), **meta}
    atomic_write_bytes(path, data)
    atomic_write_json(meta_path(path), info)
    return info


def load_book(path: str | os.PathLike) -> OpeningBook:
    """Read a book file after checking its sha256 against the JSON beside it (``BookError`` otherwise)."""
    path = Path(path)
    mpath = meta_path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BookError(f"connect4 book {path}: cannot read it ({exc.strerror or exc})") from None
    try:
        meta = json.loads(mpath.read_text())
        expected = meta["sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        raise BookError(f"connect4 book {path}: its metadata {mpath.name} is missing or unreadable") from None
    if _sha256_bytes(data) != expected:
        raise BookError(f"connect4 book {path}: checksum mismatch (sha256 differs from {mpath.name}); "
                        f"rebuild it with `boardrl book build`")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            plies = int(z["plies"])
            keys = np.cumsum(z["key_deltas"], dtype=np.uint64)
            scores = z["scores"].astype(np.int8)
    except Exception as exc:  # a file with the right checksum but the wrong layout
        raise BookError(f"connect4 book {path}: unreadable contents ({type(exc).__name__})") from None
    if keys.shape != scores.shape or int(meta.get("count", -1)) != keys.shape[0]:
        raise BookError(f"connect4 book {path}: {keys.shape[0]} keys, {scores.shape[0]} scores, "
                        f"metadata says {meta.get('count')}")
    return OpeningBook(plies, keys, scores, path, meta)


@cache
def default_book() -> OpeningBook | None:
    """The packaged book, loaded (and checked) once per process; None when the file is not there."""
    path = default_path()
    if not path.is_file():
        return None
    return load_book(path)


__all__ = [
    "BookError", "OpeningBook", "canonical_key", "decode_key", "default_book", "default_path", "load_book",
    "mirror_bits", "save_book",
]
