"""Saved models carry content hashes; a damaged, unhashed or oversized model is refused with one line, never used.

Every kind of model file (numpy tables, torch weights, agent.json) of every saved kind of agent; the command
line (``boardrl match`` / ``play``) and a stage entry with a damaged or empty ``q_table.npz``; a full disk
during a torch save.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from disk_faults import full_disk

from boardrl.agents.dots_table import DotsTableAgent, InitialValues
from boardrl.agents.learned import GreedyQAgent, ModelError, QTable
from boardrl.agents.network import NetworkAgent
from boardrl.agents.seed004_q import Seed004QAgent
from boardrl.atomic_io import atomic_directory
from boardrl.cli import app
from boardrl.config import stage_entry
from boardrl.games import make_game
from boardrl.integrity import HASH_FILE, seal_directory
from boardrl.learn import load_agent
from boardrl.nn import MLPConfig, build_network

TTT = make_game("tictactoe")
DOTS = make_game("dots_and_boxes_2x2")
CONNIPTION = make_game("conniption")


def q_agent() -> GreedyQAgent:
    table = QTable(2, 9, init_seed=1, init_std=0.1)
    table.set_row(TTT.initial_state(), np.linspace(-1, 1, 9))
    return GreedyQAgent(TTT, table, name="tabular_q")


def network_agent(hidden: list[int] | None = None) -> NetworkAgent:
    import torch

    torch.manual_seed(0)
    config = MLPConfig(hidden=hidden or [8])
    return NetworkAgent(TTT, build_network(config, TTT.encoding_shape, TTT.num_actions), config, name="dqn")


def dots_agent() -> DotsTableAgent:
    return DotsTableAgent(DOTS, np.array([0, 5, 17]), np.array([0.5, -0.25, 1.0]), InitialValues(DOTS.geo),
                          symmetry=False)


def seed004_agent() -> Seed004QAgent:
    tables = tuple(QTable(len(CONNIPTION.state_type._fields), CONNIPTION.num_actions, 0, 0.0) for _ in range(2))
    tables[1].set_row(CONNIPTION.initial_state(), np.ones(CONNIPTION.num_actions))
    return Seed004QAgent(CONNIPTION, tables)


AGENTS = {"q_table": (TTT, q_agent), "network": (TTT, network_agent), "dots_table": (DOTS, dots_agent),
          "seed004_q": (CONNIPTION, seed004_agent)}


def flip_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def one_line(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize("kind", list(AGENTS))
def test_every_file_of_every_kind_is_hashed_and_checked(tmp_path, kind):
    game, make = AGENTS[kind]
    make().save(tmp_path / "good")
    files = sorted(p.name for p in (tmp_path / "good").iterdir())
    manifest = json.loads((tmp_path / "good" / HASH_FILE).read_text())
    assert sorted(manifest["files"]) == [f for f in files if f != HASH_FILE] and "agent.json" in manifest["files"]
    assert load_agent(game, None, tmp_path / "good").kind == kind
    for name in files:
        damaged = tmp_path / f"damaged-{name}"
        make().save(damaged)
        flip_byte(damaged / name)
        with pytest.raises(ModelError) as exc:
            load_agent(game, None, damaged)
        # A damaged hash manifest is named as such, or makes the file whose record it garbled mismatch.
        named = f"{damaged}/" if name == HASH_FILE else f"{damaged / name}: "
        assert one_line(exc).startswith(named), (name, str(exc.value))
        assert "refusing to load the model: rerun training (`make repro`" in str(exc.value)


def test_saving_twice_gives_the_same_hash_manifest(tmp_path):
    network_agent().save(tmp_path / "a")
    network_agent().save(tmp_path / "b")
    assert (tmp_path / "a" / HASH_FILE).read_bytes() == (tmp_path / "b" / HASH_FILE).read_bytes()


def test_a_model_without_hashes_is_refused_with_the_way_out(tmp_path):
    """What the models trained before this change look like: refused until retrained, never loaded unverified."""
    q_agent().save(tmp_path / "m")
    (tmp_path / "m" / HASH_FILE).unlink()
    with pytest.raises(ModelError) as exc:
        load_agent(TTT, "tabular_q", tmp_path / "m")
    assert one_line(exc) == (f"{tmp_path / 'm' / HASH_FILE}: missing: the files were saved without content hashes, "
                             f"so they cannot be verified; refusing to load the model: rerun training (`make repro` "
                             f"for the pipeline's models)")


def test_a_file_added_or_removed_after_saving_is_refused(tmp_path):
    seed004_agent().save(tmp_path / "m")
    (tmp_path / "m" / "notes.txt").write_text("hello")
    with pytest.raises(ModelError, match=r"notes.txt: not recorded in sha256.json"):
        load_agent(CONNIPTION, None, tmp_path / "m")
    (tmp_path / "m" / "notes.txt").unlink()
    (tmp_path / "m" / "q_table.second.npz").unlink()
    with pytest.raises(ModelError, match=r"q_table.second.npz: missing \(its content hash is recorded\)"):
        load_agent(CONNIPTION, None, tmp_path / "m")
    (tmp_path / "m" / ".editor-swap").write_text("hidden files are no part of a model")
    seed004_agent().save(tmp_path / "m")
    assert load_agent(CONNIPTION, None, tmp_path / "m").tables[1].count == 1


def test_agent_json_that_is_a_list_is_one_line(tmp_path):
    q_agent().save(tmp_path / "m")
    (tmp_path / "m" / "agent.json").write_text("[1, 2, 3]\n")
    with pytest.raises(ModelError, match="agent.json: shorter than written"):
        load_agent(TTT, None, tmp_path / "m")
    seal_directory(tmp_path / "m")  # even when its hash matches (written that way), a list is no agent
    with pytest.raises(ModelError) as exc:
        load_agent(TTT, None, tmp_path / "m")
    assert one_line(exc) == f"{tmp_path / 'm' / 'agent.json'}: holds a JSON list, not an object of agent settings"


def test_bad_field_types_in_a_sealed_agent_json_are_one_line(tmp_path):
    q_agent().save(tmp_path / "m")
    info = json.loads((tmp_path / "m" / "agent.json").read_text())
    for bad in ({"kind": ["q_table"]}, {"init_seed": "x"}, {"init_std": None}):
        (tmp_path / "m" / "agent.json").write_text(json.dumps({**info, **bad}))
        seal_directory(tmp_path / "m")
        with pytest.raises(ModelError) as exc:
            load_agent(TTT, None, tmp_path / "m")
        assert one_line(exc).startswith(f"{tmp_path / 'm' / 'agent.json'}: "), str(exc.value)


def test_an_oversized_network_in_agent_json_is_refused_before_allocating(tmp_path):
    network_agent().save(tmp_path / "m")
    info = json.loads((tmp_path / "m" / "agent.json").read_text())
    (tmp_path / "m" / "agent.json").write_text(json.dumps({**info, "network": {**info["network"],
                                                                               "hidden": [30000, 30000]}}))
    seal_directory(tmp_path / "m")  # hashes that match: the sizes themselves must be checked
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(ModelError) as exc:
        load_agent(TTT, None, tmp_path / "m")
    assert one_line(exc) == (f"{tmp_path / 'm' / 'agent.json'}: its network has 900,870,009 parameters; a model "
                             f"may have at most 50,000,000")
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak < 200_000  # kB: nothing like 3.6 GB
    (tmp_path / "m" / "agent.json").write_text(json.dumps({**info, "network": {**info["network"], "hidden": [300]}}))
    seal_directory(tmp_path / "m")
    with pytest.raises(ModelError, match=r"needs 33,636 bytes of weights but network.pt holds only 3,165 bytes"):
        load_agent(TTT, None, tmp_path / "m")


# ---------------------------------------------------------------------------------------------- command line
def empty_table(tmp_path: Path, sealed: bool) -> Path:
    model = tmp_path / ("sealed" if sealed else "plain")
    q_agent().save(model)
    (model / "q_table.npz").write_bytes(b"")
    if sealed:
        seal_directory(model)
    return model


@pytest.mark.parametrize("sealed", [False, True], ids=["hash-mismatch", "hash-matches-an-empty-file"])
@pytest.mark.parametrize("command", ["match", "play"])
def test_an_empty_q_table_in_match_and_play_is_one_error_line(tmp_path, command, sealed):
    model = empty_table(tmp_path, sealed)
    args = ["match", "tictactoe", f"model:{model}", "random", "--games", "10"] if command == "match" else \
        ["play", "tictactoe", f"model:{model}"]
    res = CliRunner().invoke(app, args, input="")
    assert res.exit_code == 2 and res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr and "aborted" not in lines[0]
    if sealed:  # the hashes pass (it was "written" empty); the .npz reader's own guard names the file
        assert lines[0].startswith(f"error: cannot read Q table {model / 'q_table.npz'}: ")
    else:
        assert lines[0].startswith(f"error: {model / 'q_table.npz'}: shorter than written (0 of ")


def test_boardrl_match_process_with_a_damaged_table_prints_no_traceback(tmp_path):
    model = tmp_path / "m"
    q_agent().save(model)
    flip_byte(model / "q_table.npz")
    res = subprocess.run([sys.executable, "-m", "boardrl.cli", "match", "tictactoe", f"model:{model}", "random"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.splitlines() == [f"error: {model / 'q_table.npz'}: its content does not match the sha256 "
                                       f"recorded when it was written (the file is damaged); refusing to load the "
                                       f"model: rerun training (`make repro` for the pipeline's models)"]


def test_a_stage_loading_a_damaged_model_is_one_error_line(tmp_path, capsys):
    """What the evaluate stage does with each seed's model (``load_agent(game, learner, model dir)``)."""
    model = empty_table(tmp_path, sealed=False)
    with pytest.raises(SystemExit) as exit_:
        stage_entry(lambda: load_agent(TTT, "tabular_q", model))
    assert exit_.value.code != 0
    err = capsys.readouterr().err
    assert err.splitlines() == [err.strip()] and err.startswith(f"error: {model / 'q_table.npz'}: shorter than ")


# ---------------------------------------------------------------------------------------------- full disk
def test_a_full_disk_during_a_torch_save_is_one_line_and_keeps_the_previous_model(tmp_path, monkeypatch, capsys):
    target = tmp_path / "model"
    network_agent().save(target)
    before = {p.name: p.read_bytes() for p in target.iterdir()}
    full_disk(monkeypatch, budget=1000)  # network.pt (about 4 kB) does not fit
    with pytest.raises(OSError) as exc:
        with atomic_directory(target) as tmp:  # how the train stage publishes a model
            network_agent([16]).save(tmp)
    assert exc.value.errno == errno.ENOSPC and exc.value.filename.endswith("network.pt")
    with pytest.raises(SystemExit):
        stage_entry(lambda: network_agent([16]).save(target))  # saved in place: the stage's one line
    monkeypatch.undo()
    err = capsys.readouterr().err
    assert err.splitlines() == [f"error: {target / 'network.pt'}: No space left on device; previous outputs are kept"]
    assert {p.name: p.read_bytes() for p in target.iterdir()} == before  # nothing half-written, no temporaries
    assert sorted(os.listdir(tmp_path)) == ["model"]
    assert load_agent(TTT, "dqn", target).config.hidden == [8]
