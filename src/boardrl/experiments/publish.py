"""Publishing a stage's outputs: helpers shared by the stages (see experiments/train.py, curve.py, evaluate.py).

The atomic writers of ``boardrl.atomic_io`` name their temporaries ``.<target name>.tmp-...`` beside the target.
A killed stage leaves them behind; the next run of the same stage removes those of its own targets only, never a
sibling's (another experiment's stage may be writing beside it).
"""

from __future__ import annotations

import shutil
from pathlib import Path


def remove_stale_beside(target: Path) -> int:
    """Delete the temporaries an atomic writer of ``target`` left beside it; returns how many went."""
    target = Path(target)
    if not target.parent.is_dir():
        return 0
    n = 0
    for p in target.parent.glob(f".{target.name}.tmp-*"):
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
        n += 1
    return n
