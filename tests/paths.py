"""Paths of data files the tests read: the UCI copy vendored in the repository (same sha256 as the official
files; see data/vendor/README.md), so the suite needs nothing outside the clone."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
UCI_Z = REPO_ROOT / "data" / "vendor" / "connect-4.data.Z"
