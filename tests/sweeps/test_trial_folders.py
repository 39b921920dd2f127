"""A sweep trial's checkpoint folder names its trainer's process, and the next trial removes those of trainers
that were killed (sweeps/objective.py ``remove_orphaned_trial_folders``)."""

from __future__ import annotations

import os
import subprocess
import sys

from boardrl.sweeps.objective import TRIAL_PREFIX, remove_orphaned_trial_folders


def a_finished_pid() -> int:
    """The pid of a process that has exited (and been reaped), so no process has it for now."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    return int(done.stdout)


def test_folders_of_gone_trainers_are_removed_and_live_ones_and_others_kept(tmp_path):
    gone = tmp_path / (TRIAL_PREFIX.format(pid=a_finished_pid()) + "abc")
    mine = tmp_path / (TRIAL_PREFIX.format(pid=os.getpid()) + "def")
    other = tmp_path / "boardrl-trial-unnamed"  # a name of another scheme: not ours to judge
    for folder in (gone, mine, other):
        (folder / "checkpoint").mkdir(parents=True)
        (folder / "checkpoint" / "state.pt").write_bytes(b"x" * 100)
    assert remove_orphaned_trial_folders(tmp_path) == [gone]
    assert not gone.exists() and mine.is_dir() and other.is_dir()
    assert remove_orphaned_trial_folders(tmp_path) == []
