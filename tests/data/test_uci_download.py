"""Download stage logic: official URL first, vendored fallback offline, checksums enforced from any source."""

from __future__ import annotations

import hashlib
import io
import re
import socket
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from boardrl.data import uci_download as d

ROOT = Path(__file__).resolve().parents[2]
VENDOR = ROOT / "data" / "vendor"


def closed_port_url() -> str:
    """A URL on 127.0.0.1 whose port nothing listens on: the connection is refused at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/connect+4.zip"


def zip_url(tmp_path: Path, members: dict[str, bytes]) -> str:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    path = tmp_path / "connect+4.zip"
    path.write_bytes(buf.getvalue())
    return path.as_uri()


def vendored_raw() -> dict[str, bytes]:
    return {n: (VENDOR / n).read_bytes() for n in (d.COMPRESSED, d.NAMES)}


def corrupt(data: bytes) -> bytes:
    return data[:1000] + bytes([data[1000] ^ 0xFF]) + data[1001:]


def test_vendored_copy_matches_the_published_sums():
    got = d.obtain("vendored", vendor_dir=VENDOR)
    assert got.source == "vendored"
    assert hashlib.sha256(got.files[d.DATA]).hexdigest() == d.SHA256[d.DATA]
    assert len(got.files[d.DATA]) == d.SIZES[d.DATA] and len(got.files[d.NAMES]) == d.SIZES[d.NAMES]
    assert "Tromp" in (VENDOR / "README.md").read_text() and "CC BY 4.0" in (VENDOR / "ATTRIBUTION").read_text()


def test_offline_falls_back_fast_and_says_so():
    """No wall-time race: a refused connection is answered at once, so the fallback cannot have waited for the
    20 s timeout (the note names the refusal); timings belong in benchmarks."""
    notes: list[str] = []
    got = d.obtain("auto", url=closed_port_url(), timeout_s=20, vendor_dir=VENDOR, note=notes.append)
    assert got.source == "vendored" and len(notes) == 1
    assert "cannot download http://127.0.0.1:" in notes[0] and "vendored copy" in notes[0]
    assert "refused" in notes[0].lower()


def test_online_only_fails_when_unreachable():
    url = closed_port_url()
    with pytest.raises(d.SourceUnavailable, match=re.escape(f"cannot download {url}")):
        d.obtain("online", url=url, vendor_dir=VENDOR)


def test_online_archive_is_used_when_reachable(tmp_path):
    notes: list[str] = []
    got = d.obtain("auto", url=zip_url(tmp_path, {f"sub/{k}": v for k, v in vendored_raw().items()}),
                   vendor_dir=tmp_path / "no-vendor", note=notes.append)
    assert got.source == "online" and notes == []
    assert d.sha256(got.files[d.DATA]) == d.SHA256[d.DATA]


def test_checksum_mismatch_online_is_an_error_not_a_fallback(tmp_path):
    raw = vendored_raw()
    raw[d.COMPRESSED] = corrupt(raw[d.COMPRESSED])
    url = zip_url(tmp_path, raw)
    with pytest.raises(d.ChecksumError) as info:
        d.obtain("auto", url=url, vendor_dir=VENDOR)
    msg = str(info.value)
    assert f"checksum mismatch for {d.COMPRESSED} from {url}" in msg
    assert d.SHA256[d.COMPRESSED] in msg and hashlib.sha256(raw[d.COMPRESSED]).hexdigest() in msg


def test_unusable_online_answer_falls_back(tmp_path):
    page = tmp_path / "portal.html"
    page.write_text("<html>please log in</html>")
    notes: list[str] = []
    got = d.obtain("auto", url=page.as_uri(), vendor_dir=VENDOR, note=notes.append)
    assert got.source == "vendored" and "did not deliver a zip archive" in notes[0]
    with pytest.raises(d.SourceUnavailable, match="holds no connect-4.data.Z"):
        d.obtain("online", url=zip_url(tmp_path, {"readme.txt": b"x"}), vendor_dir=VENDOR)


def test_corrupt_vendored_copy_names_file_and_hashes(tmp_path):
    bad = tmp_path / "vendor"
    bad.mkdir()
    raw = vendored_raw()
    (bad / d.COMPRESSED).write_bytes(corrupt(raw[d.COMPRESSED]))
    (bad / d.NAMES).write_bytes(raw[d.NAMES])
    with pytest.raises(d.ChecksumError, match=rf"{d.COMPRESSED} from .*expected sha256 {d.SHA256[d.COMPRESSED]}, got [0-9a-f]{{64}}"):
        d.obtain("vendored", vendor_dir=bad)
    (bad / d.COMPRESSED).unlink()
    with pytest.raises(d.SourceUnavailable, match="is missing"):
        d.obtain("vendored", vendor_dir=bad)


def test_write_raw_writes_the_verified_bytes(tmp_path):
    got = d.obtain("vendored", vendor_dir=VENDOR)
    paths = d.write_raw(got, tmp_path / "raw")
    assert [p.name for p in paths] == [d.DATA, d.NAMES]
    assert d.sha256(paths[0].read_bytes()) == d.SHA256[d.DATA]


def test_download_stage_refuses_a_corrupt_copy_and_writes_nothing(tmp_path):
    """The stage script end to end: one error line naming file and hashes, exit 1, previous output untouched."""
    proj = tmp_path / "proj"
    (proj / "pipeline").mkdir(parents=True)
    (proj / "pipeline" / "download.py").write_bytes((ROOT / "pipeline" / "download.py").read_bytes())
    params = (ROOT / "params.yaml").read_text().replace("source: auto", "source: vendored")
    (proj / "params.yaml").write_text(params)
    (proj / "data" / "vendor").mkdir(parents=True)
    raw = vendored_raw()
    (proj / "data" / "vendor" / d.COMPRESSED).write_bytes(corrupt(raw[d.COMPRESSED]))
    (proj / "data" / "vendor" / d.NAMES).write_bytes(raw[d.NAMES])
    (proj / "data" / "raw").mkdir()
    (proj / "data" / "raw" / d.DATA).write_text("previous output")
    res = subprocess.run([sys.executable, "pipeline/download.py"], cwd=proj, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 1
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: checksum mismatch for {d.COMPRESSED}")
    assert d.SHA256[d.COMPRESSED] in lines[0]
    assert (proj / "data" / "raw" / d.DATA).read_text() == "previous output"
    assert sorted(p.name for p in (proj / "data" / "raw").iterdir()) == [d.DATA]
    assert not (proj / "mlflow.db").exists()
