"""Every stage script runs the boardrl of the checkout it lies in, not an installed one.

Why: DVC records the hashes of the checkout's code for a stage (``build/inputs``), and ``dvc exp run --queue``
runs the stage in a temporary copy of the workspace.  boardrl is installed from the workspace (editable), so a
script that imported the installed package would run the workspace's code as it is now, edited perhaps since
the experiment was queued, while the experiment records the copy's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p.name for p in (ROOT / "pipeline").glob("*.py"))


def test_every_stage_of_dvc_yaml_has_its_script_here():
    import yaml

    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    used = {part for s in stages.values() for part in (s.get("do") or s)["cmd"].split() if part.startswith("pipeline/")}
    assert used and {Path(u).name for u in used} <= set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_stage_script_imports_the_code_of_its_own_checkout(tmp_path, script):
    """A copy of the script beside a stand-in package that only reports where it was imported from."""
    (tmp_path / "pipeline").mkdir()
    shutil.copy2(ROOT / "pipeline" / script, tmp_path / "pipeline" / script)
    package = tmp_path / "src" / "boardrl"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("import sys\nprint(__file__)\nsys.exit(0)\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, f"pipeline/{script}"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert Path(out.stdout.strip()) == package / "__init__.py"
