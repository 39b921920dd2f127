"""Get the UCI Connect-4 data set: official address first, vendored copy as the offline fallback.

Why this shape:
- Users expect a pipeline to fetch data from its authoritative source, but the machines that run this project
  often have no network.  ``source="auto"`` tries the official URL (a zip with ``connect-4.data.Z`` and
  ``connect-4.names``) with a short timeout and, when it cannot be reached, uses the copy vendored in
  ``data/vendor/``, saying so on stderr.
- Both sources are verified against the published sha256 sums, before and after decompression.  A mismatch is
  an error from any source (never a silent fallback): it names the file, the expected and the actual hash.
- Everything is checked in memory first; files are written (atomically) only once every check has passed, so
  a failure leaves whatever was there before untouched.
- ``.Z`` is unix ``compress`` (LZW), which the standard library cannot read; ``unlzw3`` decodes it.
"""

from __future__ import annotations

import hashlib
import io
import sys
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Literal

from boardrl.errors import BoardRLError
from boardrl.atomic_io import atomic_write_bytes

OFFICIAL_URL = "https://archive.ics.uci.edu/static/public/26/connect+4.zip"
DEFAULT_TIMEOUT_S = 20.0
COMPRESSED = "connect-4.data.Z"
DATA = "connect-4.data"
NAMES = "connect-4.names"
#: Published sha256 sums and sizes (shared/data/uci/README.md; data/vendor/README.md).
SHA256 = {
    COMPRESSED: "14c886b817783ac9b642f42ec78a2e67f727a3d41c94913af8954d454eee2367",
    DATA: "063152e6eadbb424c7ef4645df76e493a43812edd9c992400983da4fa54f8cba",
    NAMES: "dc366b892f457153057eb51e9f10b1e76cca02a71e4198481d3abbc95293653f",
}
SIZES = {COMPRESSED: 403_464, DATA: 5_968_100, NAMES: 1_890}
Source = Literal["auto", "online", "vendored"]
SOURCES = ("auto", "online", "vendored")


class DataError(BoardRLError):
    """The data set could not be obtained or is not what it should be."""


class ChecksumError(DataError):
    """A file whose sha256 differs from the published one."""


class SourceUnavailable(DataError):
    """A source that could not deliver the files (network down, missing vendored copy, not a zip, ...)."""


@dataclass(frozen=True)
class Obtained:
    """The verified, decompressed files and where they came from ("online" or "vendored")."""

    files: dict[str, bytes]  # DATA and NAMES
    source: str
    origin: str  # the URL or the vendored directory


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def verify(name: str, data: bytes, origin: str) -> None:
    """``ChecksumError`` naming the file, the expected and the actual sha256 unless they agree."""
    actual = sha256(data)
    if actual != SHA256[name]:
        raise ChecksumError(
            f"checksum mismatch for {name} from {origin}: expected sha256 {SHA256[name]}, got {actual}"
        )


def decompress(data: bytes, origin: str) -> bytes:
    """Decode unix ``compress`` (.Z) bytes with unlzw3."""
    import unlzw3

    try:
        return unlzw3.unlzw(data)
    except Exception as exc:  # unlzw3 raises ValueError/IndexError on corrupt input
        raise DataError(f"cannot decompress {COMPRESSED} from {origin}: {exc}") from None


def fetch_online(url: str, timeout_s: float) -> dict[str, bytes]:
    """The zip's members ``connect-4.data.Z`` and ``connect-4.names`` (raw), downloaded from ``url``."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as resp:
            payload = resp.read()
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise SourceUnavailable(f"cannot download {url}: {reason}") from None
    try:
        with zipfile.ZipFile(io.BytesIO(payload)) as zf:
            members = {Path(info.filename).name: info.filename for info in zf.infolist() if not info.is_dir()}
            missing = [n for n in (COMPRESSED, NAMES) if n not in members]
            if missing:
                raise SourceUnavailable(
                    f"{url} holds no {', '.join(missing)} (members: {', '.join(sorted(members)) or 'none'})"
                )
            return {n: zf.read(members[n]) for n in (COMPRESSED, NAMES)}
    except zipfile.BadZipFile:
        raise SourceUnavailable(f"{url} did not deliver a zip archive ({len(payload)} bytes)") from None


def read_vendored(vendor_dir: Path) -> dict[str, bytes]:
    """The vendored ``connect-4.data.Z`` and ``connect-4.names`` (raw)."""
    out = {}
    for name in (COMPRESSED, NAMES):
        path = Path(vendor_dir) / name
        if not path.is_file():
            raise SourceUnavailable(f"vendored copy incomplete: {path} is missing")
        out[name] = path.read_bytes()
    return out


def check_and_decompress(raw: dict[str, bytes], origin: str) -> dict[str, bytes]:
    """Verify the raw files, decompress the data and verify it too; returns ``{DATA, NAMES}``."""
    verify(COMPRESSED, raw[COMPRESSED], origin)
    verify(NAMES, raw[NAMES], origin)
    data = decompress(raw[COMPRESSED], origin)
    verify(DATA, data, origin)
    return {DATA: data, NAMES: raw[NAMES]}


def _stderr_note(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def obtain(
    source: Source,
    *,
    url: str = OFFICIAL_URL,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    vendor_dir: Path,
    note: Callable[[str], None] = _stderr_note,
) -> Obtained:
    """Verified files from ``source``: "online" (the URL only), "vendored" (the copy only), "auto" (URL, else copy).

    Only an unreachable or unusable online source triggers the fallback; a checksum mismatch never does.
    """
    if source not in SOURCES:
        raise DataError(f"unknown data source {source!r}; choose one of {', '.join(SOURCES)}")
    if source in ("auto", "online"):
        try:
            raw = fetch_online(url, timeout_s)
        except SourceUnavailable as exc:
            if source == "online":
                raise
            note(f"note: {exc}; using the vendored copy in {vendor_dir} (same sha256 sums) instead")
        else:
            return Obtained(check_and_decompress(raw, url), "online", url)
    origin = str(vendor_dir)
    return Obtained(check_and_decompress(read_vendored(vendor_dir), origin), "vendored", origin)


def write_raw(obtained: Obtained, out_dir: Path) -> list[Path]:
    """Write ``connect-4.data`` and ``connect-4.names`` into ``out_dir`` atomically; returns the paths."""
    return [atomic_write_bytes(Path(out_dir) / name, obtained.files[name]) for name in (DATA, NAMES)]
