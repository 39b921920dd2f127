"""Which interpreter the Makefile builds ``.venv`` from (``PYTHON_CANDIDATES``, ``PYTHON``).

The first candidate that is Python 3.11 or newer with its ``venv`` module wins, so a machine whose distribution
interpreter (built with PGO and LTO) qualifies uses it, and one without it falls back to the next.  Stand-in
interpreters are shell scripts that answer the Makefile's check with an exit status, as a real one would: 0 for a
qualifying interpreter, 1 for one that is too old or lacks ``ensurepip`` (Debian without ``python3-venv``).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def stand_in(where: Path, name: str, qualifies: bool) -> str:
    """An executable that exits as the Makefile's check would for such an interpreter."""
    path = where / name
    path.write_text(f"#!/bin/sh\nexit {0 if qualifies else 1}\n")
    path.chmod(0o755)
    return str(path)


def venv_command(where: Path, *assignments: str) -> str:
    """The command ``make`` would run to create .venv, in a folder holding only the Makefile."""
    shutil.copy(ROOT / "Makefile", where / "Makefile")
    res = subprocess.run(["make", "-n", ".venv/bin/python", *assignments], cwd=where, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()


def test_the_first_qualifying_candidate_builds_the_venv(tmp_path):
    old = stand_in(tmp_path, "python-old", qualifies=False)
    good = stand_in(tmp_path, "python-good", qualifies=True)
    later = stand_in(tmp_path, "python-later", qualifies=True)
    missing = str(tmp_path / "python-missing")
    got = venv_command(tmp_path, f"PYTHON_CANDIDATES={missing} {old} {good} {later}")
    assert got == f"{good} -m venv .venv"


def test_without_a_qualifying_candidate_python3_builds_it(tmp_path):
    old = stand_in(tmp_path, "python-old", qualifies=False)
    assert venv_command(tmp_path, f"PYTHON_CANDIDATES={old} {tmp_path / 'python-missing'}") == "python3 -m venv .venv"


def test_python_on_the_command_line_overrides_the_choice(tmp_path):
    good = stand_in(tmp_path, "python-good", qualifies=True)
    got = venv_command(tmp_path, f"PYTHON_CANDIDATES={good}", "PYTHON=/opt/python3.12/bin/python3")
    assert got == "/opt/python3.12/bin/python3 -m venv .venv"
