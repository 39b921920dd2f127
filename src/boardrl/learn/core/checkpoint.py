"""Checkpoints of a training run: a nested state (numpy arrays, torch tensors, plain values) on disk, safely.

Why not ``pickle`` or a plain ``torch.save`` of the learner: a checkpoint or model file must never be able to
run code when it is loaded.  So a learner's state is a tree of dicts, lists and tuples whose leaves are

- numpy arrays -> one ``arrays-<n>.npz`` (read back with ``allow_pickle=False``),
- torch tensors (network weights, optimizer moments, torch random states) -> one ``tensors-<n>.pt`` read back
  with ``torch.load(weights_only=True)``,
- everything else (ints of any size, floats, strings, bools, None) -> the JSON manifest.

Dicts with non-string keys (optimizer ``state`` is keyed by parameter index) and tuples are tagged so they come
back as they went in.  The manifest is written last and atomically and names the data files of its own
generation, so a run killed while writing leaves the previous checkpoint whole.  A checkpoint carries the
fingerprint of the run it belongs to (game, learner, params, seed, eval points); another run's checkpoint is
ignored with a warning rather than resumed.

Integrity (format 3): the manifest records the size and sha256 of each data file (``boardrl.integrity``) and
the sha256 of its own content (``manifest_sha256``), and every value is type-checked before use.  A checkpoint
that fails any check -- a garbled or truncated file, a manifest edited by hand, one of format 2 that has no
hashes and so cannot be verified -- is never resumed from: resuming from damaged weights silently trains a
different, weaker model.  Nor is it deleted, or left in place where every rerun would trip over it again: the
whole directory is renamed to ``<dir>.damaged-<UTC time>`` beside it (``checkpoint.damaged-20250101T120000Z``),
the run starts fresh, and one line on stderr names the file, the reason and where the files went.  That name
is no checkpoint directory any run opens, ``remove_stale_temporaries`` leaves it alone (it does not start with a
dot), and ``.dvcignore`` keeps it out of the ``models/<id>`` output's hash.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from boardrl.atomic_io import atomic_save_npz, atomic_torch_save, atomic_write_text
from boardrl.errors import BoardRLError
from boardrl.integrity import IntegrityError, check_file, file_record, valid_record

FORMAT = 3
MANIFEST = "checkpoint.json"
DAMAGED = ".damaged-"
SELF_HASH = "manifest_sha256"
_DATA_NAME = {"arrays": re.compile(r"arrays-\d{15}\.npz"), "tensors": re.compile(r"tensors-\d{15}\.pt")}
_ARRAY, _TENSOR, _TUPLE, _ITEMS = "__array__", "__tensor__", "__tuple__", "__items__"


@dataclass
class Loaded:
    """What ``Checkpoint.load`` returns: progress, the learner's state tree, and the run's bookkeeping."""

    done: int
    state: dict[str, Any]
    extra: dict[str, Any]


def _is_tensor(x: Any) -> bool:
    """A torch tensor, without importing torch when nothing has (a tabular run never pays for importing it)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def split_tree(tree: Any, arrays: dict[str, np.ndarray], tensors: dict[str, Any], path: str = "") -> Any:
    """JSON-able skeleton of ``tree``; arrays and tensors are moved into the two dicts under their paths."""
    if isinstance(tree, np.ndarray):
        arrays[path] = tree
        return {_ARRAY: path}
    if _is_tensor(tree):
        tensors[path] = tree.detach().cpu()
        return {_TENSOR: path}
    if isinstance(tree, np.generic):
        return tree.item()
    if isinstance(tree, dict):
        if all(isinstance(k, str) and not k.startswith("__") for k in tree):
            return {k: split_tree(v, arrays, tensors, f"{path}/{k}") for k, v in tree.items()}
        return {_ITEMS: [[k, split_tree(v, arrays, tensors, f"{path}/{k}")] for k, v in tree.items()]}
    if isinstance(tree, tuple):
        return {_TUPLE: [split_tree(v, arrays, tensors, f"{path}/{i}") for i, v in enumerate(tree)]}
    if isinstance(tree, list):
        return [split_tree(v, arrays, tensors, f"{path}/{i}") for i, v in enumerate(tree)]
    if tree is None or isinstance(tree, (bool, int, float, str)):
        return tree
    raise TypeError(f"checkpoint state at {path or '/'}: cannot store a {type(tree).__name__}")


def join_tree(skeleton: Any, arrays: dict[str, np.ndarray], tensors: dict[str, Any]) -> Any:
    """Inverse of ``split_tree``."""
    if isinstance(skeleton, dict):
        if _ARRAY in skeleton:
            return arrays[skeleton[_ARRAY]]
        if _TENSOR in skeleton:
            return tensors[skeleton[_TENSOR]]
        if _TUPLE in skeleton:
            return tuple(join_tree(v, arrays, tensors) for v in skeleton[_TUPLE])
        if _ITEMS in skeleton:
            return {k: join_tree(v, arrays, tensors) for k, v in skeleton[_ITEMS]}
        return {k: join_tree(v, arrays, tensors) for k, v in skeleton.items()}
    if isinstance(skeleton, list):
        return [join_tree(v, arrays, tensors) for v in skeleton]
    return skeleton


class CheckpointError(BoardRLError):
    """A damaged checkpoint that cannot even be moved aside (a read-only directory): one line, nothing resumed."""


class Unreadable(Exception):
    """What makes a checkpoint unusable: the file at fault and why (becomes the one line on stderr)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = Path(path), reason


def manifest_digest(manifest: dict[str, Any]) -> str:
    """sha256 of the manifest's content without its own hash field (canonical JSON: sorted keys, no spaces)."""
    body = {k: v for k, v in manifest.items() if k != SELF_HASH}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


class Checkpoint:
    """One run's checkpoint directory (see the module docstring)."""

    def __init__(self, directory: Path, fingerprint: str) -> None:
        self.dir = Path(directory)
        self.fingerprint = fingerprint

    def load(self) -> Loaded | None:
        """The checkpoint of this run, or None to start fresh (absent, another run's, or unreadable).

        An unreadable checkpoint is set aside first (``discard``), so the fresh run cannot mix with it.
        """
        if not (self.dir / MANIFEST).is_file():
            return None
        try:
            manifest = self._read_manifest()
            if manifest["fingerprint"] != self.fingerprint:
                warnings.warn(f"ignoring checkpoint in {self.dir}: it belongs to other params, seed or eval points",
                              stacklevel=3)
                return None
            arrays, tensors = self._read_data(manifest)
            state = self._join(manifest, arrays, tensors)
        except Unreadable as bad:
            self.discard(bad.path, bad.reason)
            return None
        return Loaded(manifest["done"], state, manifest["extra"])

    def _read_manifest(self) -> dict[str, Any]:
        """The parsed manifest, its own hash and every value's type checked; ``Unreadable`` otherwise."""
        path = self.dir / MANIFEST
        try:
            manifest = json.loads(path.read_bytes())
        except Exception as exc:  # OSError, a decode error, RecursionError on absurd nesting: all unreadable
            raise Unreadable(path, f"unreadable: {_first_line(exc)}") from None
        if not isinstance(manifest, dict):
            raise Unreadable(path, f"holds a JSON {type(manifest).__name__}, not a checkpoint manifest")
        if manifest.get("format") != FORMAT or SELF_HASH not in manifest:
            fmt = manifest.get("format")
            if isinstance(fmt, int) and not isinstance(fmt, bool) and fmt < FORMAT:
                raise Unreadable(path, f"written by an older boardrl (checkpoint format {fmt}) without content "
                                       f"hashes, so it cannot be verified")
            raise Unreadable(path, f"not a checkpoint manifest of format {FORMAT} (format {fmt!r})")
        if manifest[SELF_HASH] != manifest_digest(manifest):
            raise Unreadable(path, "its content does not match its recorded sha256 (the file is damaged)")
        problem = _manifest_problem(manifest)
        if problem:
            raise Unreadable(path, problem)
        return manifest

    def _read_data(self, manifest: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """The arrays and tensors the manifest names, each checked against its size and sha256 before parsing."""
        for key in ("arrays", "tensors"):
            if manifest.get(key):
                try:
                    check_file(self.dir / manifest[key], manifest["hashes"][manifest[key]])
                except IntegrityError as exc:
                    raise Unreadable(exc.path, exc.reason) from None
        arrays: dict[str, np.ndarray] = {}
        tensors: dict[str, Any] = {}
        path = self.dir / "?"
        try:
            if manifest.get("arrays"):
                path = self.dir / manifest["arrays"]
                with np.load(path, allow_pickle=False) as data:
                    arrays = {k: data[k] for k in data.files}
            if manifest.get("tensors"):
                import torch

                path = self.dir / manifest["tensors"]
                tensors = torch.load(path, map_location="cpu", weights_only=True)
                if not isinstance(tensors, dict) or not all(isinstance(k, str) for k in tensors):
                    raise ValueError("does not hold a dict of tensors by path")
        except Exception as exc:  # damaged data raise many types (BadZipFile, UnpicklingError, EOFError, ...)
            raise Unreadable(path, f"unreadable: {_first_line(exc)}") from None
        return arrays, tensors

    def _join(self, manifest: dict[str, Any], arrays: dict[str, np.ndarray], tensors: dict[str, Any]) -> dict:
        """The state tree; a skeleton that does not fit its data (or is malformed) is ``Unreadable``."""
        try:
            state = join_tree(manifest["state"], arrays, tensors)
        except Exception as exc:  # KeyError, TypeError, ValueError, IndexError from a skeleton not ours
            raise Unreadable(self.dir / MANIFEST, f"its state does not fit its data files: "
                                                  f"{type(exc).__name__}: {_first_line(exc)}") from None
        if not isinstance(state, dict) or "learner" not in state:
            raise Unreadable(self.dir / MANIFEST, "its state holds no learner state")
        return state

    def discard(self, path: Path, reason: str) -> Path:
        """Move the whole directory aside to ``<dir>.damaged-<UTC time>`` and say so in one line on stderr.

        Public so that the caller can discard a checkpoint that read well but that its learner cannot use.
        Moved, not deleted: a person may want to see what went wrong.  ``CheckpointError`` when even the move
        fails (then nothing is resumed and nothing is overwritten).
        """
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        aside = self.dir.with_name(f"{self.dir.name}{DAMAGED}{stamp}")
        n = 1
        while aside.exists():
            n += 1
            aside = self.dir.with_name(f"{self.dir.name}{DAMAGED}{stamp}-{n}")
        try:
            os.replace(self.dir, aside)
        except OSError as exc:
            raise CheckpointError(f"{path}: {reason}; it cannot be moved aside ({exc.strerror or exc}): move or "
                                  f"delete {self.dir} and rerun") from None
        print(f"error: {path}: {reason}; discarding it and starting fresh (the checkpoint is kept in {aside})",
              file=sys.stderr, flush=True)
        return aside

    def save(self, done: int, state: dict[str, Any], extra: dict[str, Any] | None = None) -> None:
        """Write the state reached after ``done`` units; the previous generation is removed afterwards."""
        self.dir.mkdir(parents=True, exist_ok=True)
        arrays: dict[str, np.ndarray] = {}
        tensors: dict[str, Any] = {}
        skeleton = split_tree(state, arrays, tensors)
        names = {"arrays": f"arrays-{done:015d}.npz" if arrays else None,
                 "tensors": f"tensors-{done:015d}.pt" if tensors else None}
        if arrays:
            atomic_save_npz(self.dir / names["arrays"], **arrays)
        if tensors:
            atomic_torch_save(self.dir / names["tensors"], tensors)
        keep = [n for n in names.values() if n]
        manifest = {"format": FORMAT, "fingerprint": self.fingerprint, "done": int(done), **names,
                    "hashes": {n: file_record(self.dir / n) for n in keep}, "state": skeleton, "extra": extra or {}}
        manifest[SELF_HASH] = manifest_digest(manifest)
        atomic_write_text(self.dir / MANIFEST, json.dumps(manifest, indent=1) + "\n")
        for old in [*self.dir.glob("arrays-*.npz"), *self.dir.glob("tensors-*.pt")]:
            if old.name not in keep:
                old.unlink(missing_ok=True)

    def clear(self) -> None:
        """Remove the directory: a checkpoint only ever stands for an unfinished run."""
        if self.dir.is_dir():
            shutil.rmtree(self.dir)


def _manifest_problem(m: dict[str, Any]) -> str | None:
    """What is wrong with a manifest's values (their types and the data files they name), or None."""
    def whole(x: Any) -> bool:
        return isinstance(x, int) and not isinstance(x, bool) and x >= 0

    if not isinstance(m.get("fingerprint"), str) or not whole(m.get("done")):
        return "bad values: fingerprint must be a string and done a whole number"
    for key, pattern in _DATA_NAME.items():
        name = m.get(key)
        if name is not None and not (isinstance(name, str) and pattern.fullmatch(name)):
            return f"bad values: {key} names {name!r}, not a data file of this checkpoint"
    named = {m[k] for k in _DATA_NAME if m.get(k)}
    hashes = m.get("hashes")
    if not isinstance(hashes, dict) or set(hashes) != named or not all(valid_record(r) for r in hashes.values()):
        return "bad values: hashes must record the size and sha256 of exactly its data files"
    if not isinstance(m.get("state"), dict) or not isinstance(m.get("extra"), dict):
        return "bad values: state and extra must be objects"
    return _extra_problem(m["extra"])


def _extra_problem(extra: dict[str, Any]) -> str | None:
    """What is wrong with the run's bookkeeping that ``learn/core/base.py`` stores in ``extra`` and converts on resume
    (eval points -> records, eval points -> counts, seconds), or None: caught here, not as a traceback there."""
    def counts(x: Any) -> bool:
        return isinstance(x, str) and x.isdigit()

    evaluations, points = extra.get("evaluations", {}), extra.get("curve_points", {})
    if not isinstance(evaluations, dict) or not all(counts(k) for k in evaluations):
        return "bad values: extra.evaluations must map eval points to records"
    if not isinstance(points, dict) or not all(counts(k) and isinstance(v, int) and not isinstance(v, bool)
                                               for k, v in points.items()):
        return "bad values: extra.curve_points must map eval points to counts"
    seconds = extra.get("seconds", 0.0)
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool):
        return "bad values: extra.seconds must be a number"
    return None
