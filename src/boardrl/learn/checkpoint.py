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
"""

from __future__ import annotations

import json
import shutil
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from boardrl.atomic_io import atomic_save_npz, atomic_write_text, atomic_writer

FORMAT = 2
MANIFEST = "checkpoint.json"
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


class Checkpoint:
    """One run's checkpoint directory (see the module docstring)."""

    def __init__(self, directory: Path, fingerprint: str) -> None:
        self.dir = Path(directory)
        self.fingerprint = fingerprint

    def load(self) -> Loaded | None:
        """The checkpoint of this run, or None to start fresh (absent, another run's, or unreadable)."""
        path = self.dir / MANIFEST
        if not path.is_file():
            return None
        try:
            manifest = json.loads(path.read_text())
            if manifest.get("fingerprint") != self.fingerprint or manifest.get("format") != FORMAT:
                warnings.warn(f"ignoring checkpoint in {self.dir}: it belongs to other params, seed or eval points",
                              stacklevel=3)
                return None
            arrays, tensors = self._read_data(manifest)
            state = join_tree(manifest["state"], arrays, tensors)
        except (OSError, ValueError, KeyError, RuntimeError, json.JSONDecodeError) as exc:
            warnings.warn(f"ignoring unreadable checkpoint in {self.dir}: {exc}", stacklevel=3)
            return None
        return Loaded(int(manifest["done"]), state, manifest.get("extra", {}))

    def _read_data(self, manifest: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        arrays: dict[str, np.ndarray] = {}
        if manifest.get("arrays"):
            with np.load(self.dir / manifest["arrays"], allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
        tensors: dict[str, Any] = {}
        if manifest.get("tensors"):
            import torch

            tensors = torch.load(self.dir / manifest["tensors"], map_location="cpu", weights_only=True)
        return arrays, tensors

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
            import torch

            with atomic_writer(self.dir / names["tensors"]) as fh:
                torch.save(tensors, fh)
        manifest = {"format": FORMAT, "fingerprint": self.fingerprint, "done": int(done), **names,
                    "state": skeleton, "extra": extra or {}}
        atomic_write_text(self.dir / MANIFEST, json.dumps(manifest, indent=1) + "\n")
        keep = {n for n in names.values() if n}
        for old in [*self.dir.glob("arrays-*.npz"), *self.dir.glob("tensors-*.pt")]:
            if old.name not in keep:
                old.unlink(missing_ok=True)

    def clear(self) -> None:
        """Remove the directory: a checkpoint only ever stands for an unfinished run."""
        if self.dir.is_dir():
            shutil.rmtree(self.dir)
