"""Every stage of ``dvc.yaml`` runs a script that is in ``pipeline/``.

(Which boardrl a stage imports under ``dvc exp run --queue`` is ``dvc_env``'s job: tests/experiments/test_study.py.)
"""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p.name for p in (ROOT / "pipeline").glob("*.py"))


def test_every_stage_of_dvc_yaml_has_its_script_here():
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    used = {part for s in stages.values() for part in (s.get("do") or s)["cmd"].split() if part.startswith("pipeline/")}
    assert used and {Path(u).name for u in used} <= set(SCRIPTS)
