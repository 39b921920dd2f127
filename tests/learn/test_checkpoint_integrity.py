"""Damaged checkpoints are never resumed from: set aside (moved, not deleted), one line, a fresh run.

End to end with a real torch learner (DQN: a replay buffer in the .npz, weights and Adam moments in the .pt,
the rest in the JSON manifest), then each way a manifest can be wrong, directly on ``Checkpoint``.
"""

from __future__ import annotations

import errno
import fnmatch
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from disk_faults import full_disk

from boardrl.games import make_game
from boardrl.learn.core.base import MANIFEST
from boardrl.learn.core.checkpoint import SELF_HASH, Checkpoint, CheckpointError, manifest_digest
from boardrl.learn.dqn import DQNLearner
from boardrl.integrity import file_record

TTT = make_game("tictactoe")
ROOT = Path(__file__).resolve().parents[2]
PARAMS = {"steps": 400, "checkpoint_every": 150, "parallel_envs": 8, "learning_starts": 50, "batch_size": 16,
          "target_every": 20, "network": {"body": "mlp", "hidden": [16], "head": "q"},
          "exploration": {"schedule": "linear", "start": 1.0, "end": 0.1, "decay_games": 200}}
POINTS = [0, 200, 400]


class Kill(Exception):
    pass


def train(ckpt: Path, kill_at: int | None = None):
    def on_eval(step, agent):
        if kill_at is not None and step >= kill_at:
            raise Kill
        return {"step": step}

    learner = DQNLearner()
    agent = learner.train(TTT, PARAMS, seed=5, checkpoint_dir=ckpt, eval_points=POINTS, on_eval=on_eval)
    return learner, agent


def model_bytes(agent, where: Path) -> dict[str, bytes]:
    agent.save(where)
    return {p.name: p.read_bytes() for p in sorted(where.iterdir())}


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """The model of an uninterrupted run: what every run from a discarded checkpoint must end with."""
    where = tmp_path_factory.mktemp("fresh")
    _, agent = train(where / "ck")
    return model_bytes(agent, where / "model")


def killed_checkpoint(where: Path) -> Path:
    ck = where / "ck"
    with pytest.raises(Kill):
        train(ck, kill_at=200)
    assert 150 <= json.loads((ck / MANIFEST).read_text())["done"] < 200  # the end of the vector step past 150
    return ck


def flip_byte(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x20
    path.write_bytes(bytes(data))


def only_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def set_aside(ck: Path) -> Path:
    """The one directory the damaged checkpoint was moved to (and nothing left at its old place)."""
    aside = [p for p in ck.parent.iterdir() if p.name.startswith(f"{ck.name}.damaged-")]
    assert len(aside) == 1, list(ck.parent.iterdir())
    return aside[0]


def data_file(ck: Path, kind: str) -> Path:
    if kind == "json":
        return ck / MANIFEST
    return ck / json.loads((ck / MANIFEST).read_text())["arrays" if kind == "npz" else "tensors"]


@pytest.mark.parametrize("kind", ["npz", "pt", "json"])
def test_a_garbled_byte_in_any_file_is_discarded_and_the_run_starts_fresh(tmp_path, capsys, fresh, kind):
    ck = killed_checkpoint(tmp_path)
    target = data_file(ck, kind)
    if kind == "json":  # the last digit of "done" (152 -> 153): still valid JSON, only the manifest's hash tells
        done = json.loads(target.read_text())["done"]
        data = bytearray(target.read_bytes())
        data[data.index(b'"done": %d' % done) + len(b'"done": %d' % done) - 1] ^= 1
        target.write_bytes(bytes(data))
    else:
        flip_byte(target, target.stat().st_size // 2)
    original = target.read_bytes()
    capsys.readouterr()
    learner, agent = train(ck)
    line = only_line(capsys.readouterr().err)
    assert line.startswith(f"error: {target}: ") and line.endswith(")") and "discarding it and starting fresh" in line
    assert learner.resumed_from == 0
    aside = set_aside(ck)
    assert (aside / target.name).read_bytes() == original  # moved, not deleted, not "repaired"
    assert f"the checkpoint is kept in {aside}" in line
    assert model_bytes(agent, tmp_path / "model") == fresh
    assert not ck.exists()  # the fresh run finished and removed its own checkpoint; the damaged one stays aside


def test_a_truncated_npz_and_a_random_bytes_pt_are_discarded(tmp_path, capsys, fresh):
    ck = killed_checkpoint(tmp_path)
    arrays, tensors = data_file(ck, "npz"), data_file(ck, "pt")
    arrays.write_bytes(arrays.read_bytes()[:100])
    capsys.readouterr()
    _, agent = train(ck)
    line = only_line(capsys.readouterr().err)
    assert f"error: {arrays}: shorter than written (100 of " in line
    assert model_bytes(agent, tmp_path / "a") == fresh

    ck2 = killed_checkpoint(tmp_path / "second")
    tensors = data_file(ck2, "pt")
    tensors.write_bytes(np.random.default_rng(0).bytes(tensors.stat().st_size))
    capsys.readouterr()
    _, agent = train(ck2)
    line = only_line(capsys.readouterr().err)
    assert line.startswith(f"error: {tensors}: its content does not match the sha256 recorded")
    assert model_bytes(agent, tmp_path / "b") == fresh


# ---------------------------------------------------------------------------------------------- Checkpoint itself
FP = "fingerprint-of-this-run"
STATE = {"learner": {"table": np.arange(6.0).reshape(2, 3), "weights": torch.ones(3), "pair": (1, "a"),
                     "by_index": {0: np.zeros(2), 1: 2.5}}, "torch_rng": None}
EXTRA = {"evaluations": {"0": {"win": 0.5}}, "curve_points": {"0": 0}, "seconds": 1.5}


def saved(tmp_path: Path) -> Checkpoint:
    ckpt = Checkpoint(tmp_path / "ck", FP)
    ckpt.save(7, STATE, EXTRA)
    return ckpt


def rewrite(ck: Path, change) -> None:
    """Edit the manifest and re-sign it, as a tool (or person) that knows the format might: the values must still
    be checked, not only the hash."""
    manifest = json.loads((ck / MANIFEST).read_text())
    manifest = change(manifest)
    if isinstance(manifest, dict) and SELF_HASH in manifest:
        manifest[SELF_HASH] = manifest_digest(manifest)
    (ck / MANIFEST).write_text(json.dumps(manifest))


def test_a_checkpoint_round_trips_with_its_hashes(tmp_path, capsys):
    ckpt = saved(tmp_path)
    manifest = json.loads((ckpt.dir / MANIFEST).read_text())
    assert manifest["format"] == 3 and set(manifest["hashes"]) == {manifest["arrays"], manifest["tensors"]}
    assert manifest["hashes"][manifest["arrays"]] == file_record(ckpt.dir / manifest["arrays"])
    loaded = Checkpoint(ckpt.dir, FP).load()
    assert loaded.done == 7 and loaded.extra == EXTRA
    learner = loaded.state["learner"]
    assert np.array_equal(learner["table"], STATE["learner"]["table"])
    assert torch.equal(learner["weights"], torch.ones(3))
    assert learner["pair"] == (1, "a") and learner["by_index"][1] == 2.5
    assert capsys.readouterr().err == ""


def _set(key, value):
    def change(m):
        m[key] = value
        return m
    return change


def _drop(key):
    def change(m):
        del m[key]
        return m
    return change


def _state(skeleton):
    return _set("state", skeleton)


BAD_MANIFESTS = {
    "done is a string": (_set("done", "seven"), "bad values: fingerprint must be a string and done a whole number"),
    "done is negative": (_set("done", -1), "done a whole number"),
    "done is missing": (_drop("done"), "done a whole number"),
    "hashes missing": (_drop("hashes"), "hashes must record"),
    "arrays is a path elsewhere": (_set("arrays", "../../../etc/passwd"), "not a data file of this checkpoint"),
    "arrays is a number": (_set("arrays", 3), "not a data file of this checkpoint"),
    "arrays key missing": (_drop("arrays"), "hashes must record the size and sha256 of exactly its data files"),
    "hash record mistyped": (lambda m: {**m, "hashes": {n: {"bytes": "9", "sha256": r["sha256"]}
                                                       for n, r in m["hashes"].items()}}, "hashes must record"),
    "state is a list": (_state([1, 2]), "state and extra must be objects"),
    "items pair too short (ValueError/IndexError)": (_state({"learner": {"__items__": [[1]]}}),
                                                     "its state does not fit its data files"),
    "array path missing (KeyError)": (_state({"learner": {"__array__": "/nowhere"}}), "does not fit its data files"),
    "tuple of a number (TypeError)": (_state({"learner": {"__tuple__": 5}}), "does not fit its data files"),
    "no learner state": (_state({"other": 1}), "holds no learner state"),
    "curve points not counts": (_set("extra", {"curve_points": {"0": "zero"}}), "extra.curve_points"),
    "seconds a string": (_set("extra", {"seconds": "long"}), "extra.seconds must be a number"),
    "a JSON list": (lambda m: [m], "holds a JSON list, not a checkpoint manifest"),
    "old format without hashes": (lambda m: {k: v for k, v in m.items() if k not in ("hashes", SELF_HASH)}
                                  | {"format": 2}, "older boardrl (checkpoint format 2) without content hashes"),
    "unsigned edit": (lambda m: {**m, "done": 8}, None),  # rewrite() re-signs; this case is undone below
}


@pytest.mark.parametrize("case", list(BAD_MANIFESTS))
def test_bad_manifest_values_are_set_aside_with_one_line(tmp_path, capsys, case):
    change, reason = BAD_MANIFESTS[case]
    ckpt = saved(tmp_path)
    rewrite(ckpt.dir, change)
    if reason is None:  # an edit that did not update the manifest's own hash
        manifest = json.loads((ckpt.dir / MANIFEST).read_text())
        manifest[SELF_HASH] = "0" * 64
        (ckpt.dir / MANIFEST).write_text(json.dumps(manifest))
        reason = "its content does not match its recorded sha256"
    assert Checkpoint(ckpt.dir, FP).load() is None
    line = only_line(capsys.readouterr().err)
    assert line.startswith(f"error: {ckpt.dir / MANIFEST}: ") and reason in line, line
    assert line.endswith(f"discarding it and starting fresh (the checkpoint is kept in {set_aside(ckpt.dir)})")
    assert not ckpt.dir.exists()


def test_a_random_bytes_pt_that_matches_its_recorded_hash_is_still_unreadable(tmp_path, capsys):
    """Hashes re-signed over garbage: the parse itself must fail as one line too, never a traceback."""
    ckpt = saved(tmp_path)
    manifest = json.loads((ckpt.dir / MANIFEST).read_text())
    for name in (manifest["tensors"], manifest["arrays"]):
        (ckpt.dir / name).write_bytes(np.random.default_rng(1).bytes(300))
    rewrite(ckpt.dir, lambda m: {**m, "hashes": {n: file_record(ckpt.dir / n) for n in m["hashes"]}})
    assert Checkpoint(ckpt.dir, FP).load() is None
    line = only_line(capsys.readouterr().err)
    assert line.startswith(f"error: {ckpt.dir / manifest['arrays']}: unreadable: ")


def test_another_runs_checkpoint_is_ignored_not_set_aside(tmp_path, capsys):
    ckpt = saved(tmp_path)
    with pytest.warns(UserWarning, match="ignoring checkpoint"):
        assert Checkpoint(ckpt.dir, "another run").load() is None
    assert ckpt.dir.is_dir() and not list(tmp_path.glob("*.damaged-*"))


def test_a_damaged_checkpoint_that_cannot_be_moved_is_one_error_and_nothing_is_resumed(tmp_path, monkeypatch):
    ckpt = saved(tmp_path)
    rewrite(ckpt.dir, _set("done", "x"))

    def refuse(src, dst):
        raise PermissionError(errno.EACCES, "Permission denied", str(src))

    monkeypatch.setattr("boardrl.learn.core.checkpoint.os.replace", refuse)
    with pytest.raises(CheckpointError, match=r"cannot be moved aside \(Permission denied\): move or delete") as err:
        Checkpoint(ckpt.dir, FP).load()
    assert "\n" not in str(err.value) and (ckpt.dir / MANIFEST).is_file()


def test_the_set_aside_name_is_no_checkpoint_and_dvc_ignores_it(tmp_path):
    ckpt = saved(tmp_path)
    rewrite(ckpt.dir, _set("done", "x"))
    Checkpoint(ckpt.dir, FP).load()
    aside = set_aside(ckpt.dir)
    patterns = [line.strip() for line in (ROOT / ".dvcignore").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    assert any(fnmatch.fnmatch(aside.name, p) for p in patterns)  # not part of the models/<id> output
    assert not aside.name.startswith(".")  # remove_stale_temporaries (train stage) would delete a dot name
    assert Checkpoint(tmp_path / "ck", FP).load() is None  # the run's own directory is simply empty now


def test_a_full_disk_during_the_torch_save_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    ckpt = Checkpoint(tmp_path / "ck", FP)
    only_tensors = {"learner": {"weights": torch.arange(4000.0)}}
    ckpt.save(7, only_tensors, EXTRA)
    before = {p.name: p.read_bytes() for p in ckpt.dir.iterdir()}
    full_disk(monkeypatch, budget=1000)  # the torch file (16 kB) does not fit
    with pytest.raises(OSError) as err:  # an OSError (one line at the stage), not torch's RuntimeError
        ckpt.save(9, only_tensors, EXTRA)
    assert err.value.errno == errno.ENOSPC
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in ckpt.dir.iterdir()} == before  # no temporary left, nothing changed
    assert Checkpoint(ckpt.dir, FP).load().done == 7  # the previous generation, whole


def test_a_checkpoint_whose_state_does_not_fit_the_learner_is_discarded(tmp_path, capsys, fresh, monkeypatch):
    """Hashes match but the learner's code cannot load the state (changed code, same fingerprint): set aside."""
    ck = killed_checkpoint(tmp_path)
    original = DQNLearner.load_state_dict

    def refuse_once(self, state):
        monkeypatch.setattr(DQNLearner, "load_state_dict", original)
        original(self, state)  # half-loaded: the fresh run must not keep any of it
        raise KeyError("replay")

    monkeypatch.setattr(DQNLearner, "load_state_dict", refuse_once)
    capsys.readouterr()
    learner, agent = train(ck)
    line = only_line(capsys.readouterr().err)
    assert line.startswith(f"error: {ck / MANIFEST}: its state does not fit this learner (KeyError: 'replay')")
    assert "discarding it and starting fresh" in line
    assert learner.resumed_from == 0
    set_aside(ck)
    assert model_bytes(agent, tmp_path / "model") == fresh
