"""Publishing a stage's outputs all or nothing: staged beside their targets, then switched in together.

Why: a stage's outputs belong together (a model, its snapshots and the summary naming its MLflow run; an
evaluation and the headline metrics drawn from it).  Written one after another, a failure halfway (a read-only
folder, a full disk, a kill) leaves new and old outputs side by side, each whole and together wrong.  So every
output is first written completely under a temporary name in its target's folder (``Publication.stage_directory``
and ``stage_file``; names ``.<target>.tmp-new-*``, which DVC and git ignore); ``commit`` then writes a journal of
the planned renames and moves each target aside and its new version in.  If a rename fails, the ones made are
undone, newest first, and the previous outputs stand (``PublishError`` says so).  If the process dies between
renames, the stage's next run calls ``recover`` before anything else: every staged output was complete when the
journal was written, so going forward publishes the new outputs whole.

The atomic writers of ``boardrl.atomic_io`` name their temporaries ``.<target name>.tmp-...`` beside the target.
A killed stage leaves them behind; the next run of the same stage removes those of its own targets only
(``remove_stale_beside``), never a sibling's (another experiment's stage may be writing beside it).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from boardrl.atomic_io import atomic_write_json, fsync_dir
from boardrl.errors import BoardRLError

JOURNAL_FORMAT = 1
NOTHING_PUBLISHED = "nothing was published: the previous outputs are in place"


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


class PublishError(BoardRLError):
    """Publishing failed; the message says which outputs are in place (the previous ones, or none switched)."""


@dataclass
class _Switch:
    staged: Path
    target: Path
    old: Path


class Publication:
    """A stage's outputs, staged beside their targets and switched in together: all of them or none (see the
    module docstring)."""

    def __init__(self, journal: Path) -> None:
        self.journal = Path(journal)
        self.switches: list[_Switch] = []

    def stage_directory(self, target: Path) -> Path:
        """An empty directory to fill with the new version of directory ``target``."""
        staged = Path(tempfile.mkdtemp(prefix=f".{Path(target).name}.tmp-new-", dir=_parent(target)))
        os.chmod(staged, 0o755)
        self._add(staged, target)
        return staged

    def stage_file(self, target: Path) -> Path:
        """A path to write the new version of file ``target`` to (it does not exist yet)."""
        fd, name = tempfile.mkstemp(prefix=f".{Path(target).name}.tmp-new-", dir=_parent(target))
        os.close(fd)
        os.unlink(name)
        self._add(Path(name), target)
        return Path(name)

    def _add(self, staged: Path, target: Path) -> None:
        old = Path(target).parent / f".{Path(target).name}.tmp-old-{staged.name.rsplit('-', 1)[-1]}"
        self.switches.append(_Switch(staged, Path(target), old))

    def discard(self) -> None:
        """Remove whatever was staged (nothing was switched)."""
        for s in self.switches:
            _remove(s.staged)

    def commit(self) -> None:
        """Switch every staged output in; ``PublishError`` with the previous outputs in place if one cannot be."""
        missing = [s.staged for s in self.switches if not s.staged.exists()]
        if missing:
            self.discard()
            raise PublishError(f"{missing[0]}: a staged output is missing; {NOTHING_PUBLISHED}")
        try:
            atomic_write_json(self.journal, {"format": JOURNAL_FORMAT, "switches": [
                {"staged": str(s.staged), "target": str(s.target), "old": str(s.old)} for s in self.switches]})
        except OSError as exc:
            self.discard()
            raise PublishError(f"{_why(exc)}; {NOTHING_PUBLISHED}") from None
        done: list[tuple[_Switch, bool, bool]] = []
        try:
            for s in self.switches:
                aside = s.target.exists() or s.target.is_symlink()
                if aside:
                    os.replace(s.target, s.old)
                done.append((s, aside, False))
                os.replace(s.staged, s.target)
                done[-1] = (s, aside, True)
        except BaseException as exc:
            self._roll_back(done, exc)
            raise
        for parent in {s.target.parent for s in self.switches}:
            fsync_dir(parent)
        _forget(self.journal, self.switches)

    def _roll_back(self, done: list[tuple[_Switch, bool, bool]], cause: BaseException) -> None:
        """Undo the renames made so far, newest first; the journal goes once the previous outputs stand again."""
        try:
            for s, aside, switched in reversed(done):
                if switched:
                    os.replace(s.target, s.staged)
                if aside:
                    os.replace(s.old, s.target)
        except OSError as undo:
            if isinstance(cause, OSError):
                raise PublishError(f"{_why(cause)}, and putting the previous outputs back failed too "
                                   f"({_why(undo)}); the next run completes the switch recorded in "
                                   f"{self.journal}") from None
            return  # a kill or an interrupt: the journal stays, the next run completes the switch
        self.discard()
        self.journal.unlink(missing_ok=True)
        if isinstance(cause, OSError):
            raise PublishError(f"{_why(cause)}; {NOTHING_PUBLISHED}") from None


def recover(journal: Path) -> bool:
    """Complete a switch a killed run left halfway (see ``Publication``); True when there was one to complete."""
    journal = Path(journal)
    try:
        data = json.loads(journal.read_text())
        switches = [_Switch(Path(s["staged"]), Path(s["target"]), Path(s["old"])) for s in data["switches"]]
    except FileNotFoundError:
        return False
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise PublishError(f"{journal}: unreadable publication journal ({exc}); delete it and rerun") from None
    for s in switches:
        if not s.staged.exists():
            continue  # switched before the interruption
        if s.target.exists() or s.target.is_symlink():
            _remove(s.old)
            os.replace(s.target, s.old)
        os.replace(s.staged, s.target)
    _forget(journal, switches)
    return True


def _forget(journal: Path, switches: list[_Switch]) -> None:
    """After a complete switch: the journal goes first (nothing to redo), then the previous outputs.  A journal
    that cannot be removed is harmless: every staged output is in place, so ``recover`` has nothing to redo."""
    with contextlib.suppress(OSError):
        journal.unlink(missing_ok=True)
    for s in switches:
        _remove(s.old)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _parent(target: Path) -> Path:
    parent = Path(target).parent
    parent.mkdir(parents=True, exist_ok=True)
    return parent


def _why(exc: OSError) -> str:
    """``<path>: <reason>`` of a file-system error."""
    reason = exc.strerror or str(exc)
    return f"{exc.filename}: {reason}" if exc.filename is not None else reason


def publish_all(journal: Path, build: Callable[["Publication"], Any], what: str, kept: str = "") -> Any:
    """Stage every output with ``build(publication)``, then switch them in together; returns what ``build`` did.

    A failure is one ``PublishError`` line: ``<what>: <reason>; <which outputs are in place>[; <kept>]``
    (``kept``: what else the failure leaves, e.g. the training checkpoint).
    """
    pub = Publication(journal)
    try:
        result = build(pub)
    except OSError as exc:
        pub.discard()
        raise PublishError(_line(what, f"cannot write the new outputs: {_why(exc)}; {NOTHING_PUBLISHED}", kept)) \
            from None
    except BaseException:
        pub.discard()
        raise
    try:
        pub.commit()
    except PublishError as exc:
        raise PublishError(_line(what, str(exc), kept)) from None
    return result


def _line(what: str, message: str, kept: str) -> str:
    return f"{what}: {message}" + (f"; {kept}" if kept else "")
