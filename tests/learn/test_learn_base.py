"""The learner contract: eval callbacks, checkpoints, resume == uninterrupted, schedules, errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from boardrl.games import make_game
from boardrl.learn import Exploration, LearnError, learner_names, learner_params_model, make_learner
from boardrl.learn.core.base import MANIFEST, segment_ends

TTT = make_game("tictactoe")
# Fixed opponent (its moves use the shared RNG), alternating seats and a decaying epsilon: every source of
# randomness and every counter a checkpoint must restore is exercised.
PARAMS = {"games": 3_000, "checkpoint_every": 1_000, "opponent": "random", "parallel_games": 64,
          "exploration": {"schedule": "exponential", "start": 1.0, "end": 0.1, "decay_games": 800}}
POINTS = [0, 100, 1_000, 3_000]
# Where they are measured: at the end of the wave of 64 games in flight there (learn/core/slots.py), and at the end.
MEASURED = [0, 128, 1_024, 3_000]


class Kill(Exception):
    """Stands for the process dying inside a callback."""


def sorted_table(agent):
    keys, vals = agent.table.compact()
    order = np.lexsort(keys.T[::-1])
    return keys[order], vals[order]


def run(ckpt: Path, kill_at: int | None = None, seen: list | None = None):
    def on_eval(n, agent):
        if n == kill_at:
            raise Kill
        if seen is not None:
            seen.append((n, sorted_table(agent)))

    return make_learner("tabular_q").train(TTT, PARAMS, seed=11, checkpoint_dir=ckpt, eval_points=POINTS,
                                           on_eval=on_eval)


def test_on_eval_gets_each_point_once_with_a_frozen_agent(tmp_path):
    seen: list = []
    final = run(tmp_path / "ck", seen=seen)
    assert [n for n, _ in seen] == MEASURED
    assert len(seen[0][1][0]) == 0  # before training the table is empty
    sizes = [len(keys) for _, (keys, _) in seen]
    assert sizes == sorted(sizes) and sizes[1] < sizes[-1]  # snapshots did not keep changing with training
    fk, fv = sorted_table(final)
    assert np.array_equal(seen[-1][1][0], fk) and np.array_equal(seen[-1][1][1], fv)


def test_resume_after_kills_equals_uninterrupted_run(tmp_path):
    ref_seen: list = []
    ref = run(tmp_path / "ref", seen=ref_seen)
    ck = tmp_path / "ck"
    seen: list = []
    with pytest.raises(Kill):
        run(ck, kill_at=1_024, seen=seen)  # dies at eval 1,024: last checkpoint is the one at 128
    assert json.loads((ck / MANIFEST).read_text())["done"] == 128
    with pytest.raises(Kill):
        run(ck, kill_at=3_000, seen=seen)  # resumes at 128, dies at the end: last checkpoint at 2,048
    assert json.loads((ck / MANIFEST).read_text())["done"] == 2_048
    final = run(ck, seen=seen)
    assert [n for n, _ in seen] == MEASURED  # points before a checkpoint are not called again
    for (n1, (k1, v1)), (n2, (k2, v2)) in zip(ref_seen, seen):
        assert n1 == n2 and np.array_equal(k1, k2) and np.array_equal(v1, v2)
    rk, rv = sorted_table(ref)
    fk, fv = sorted_table(final)
    assert np.array_equal(rk, fk) and np.array_equal(rv, fv)  # bit for bit
    assert final.meta == ref.meta
    assert not (ck / MANIFEST).exists()  # a finished run leaves no checkpoint behind


def test_keep_checkpoint_leaves_the_last_checkpoint_for_the_caller_to_clear(tmp_path):
    """The train stage clears the checkpoint only after it has published the outputs (experiments/train.py)."""
    learner = make_learner("tabular_q")
    kept = learner.train(TTT, PARAMS, seed=11, checkpoint_dir=tmp_path / "ck", eval_points=POINTS,
                         keep_checkpoint=True)
    assert json.loads((tmp_path / "ck" / MANIFEST).read_text())["done"] == 2_048  # the last segment's start
    again = make_learner("tabular_q")
    resumed = again.train(TTT, PARAMS, seed=11, checkpoint_dir=tmp_path / "ck", eval_points=POINTS)
    assert again.resumed_from == 2_048 and not (tmp_path / "ck").exists()  # the default clears it at the end
    assert all(np.array_equal(a, b) for a, b in zip(sorted_table(kept), sorted_table(resumed)))
    learner.checkpoint.clear()  # what the caller does once its outputs are in place: nothing left to clear here
    assert not (tmp_path / "ck").exists()


def test_checkpoint_of_other_params_is_ignored(tmp_path):
    ck = tmp_path / "ck"
    def die_at_1000(n, agent):
        if n == 1_024:
            raise Kill

    with pytest.raises(Kill):
        make_learner("tabular_q").train(TTT, {**PARAMS, "alpha": 0.5}, seed=11, checkpoint_dir=ck,
                                        eval_points=POINTS, on_eval=die_at_1000)
    assert (ck / MANIFEST).exists()
    with pytest.warns(UserWarning, match="ignoring checkpoint"):
        resumed = run(ck)
    fresh = run(tmp_path / "fresh")
    assert np.array_equal(sorted_table(resumed)[1], sorted_table(fresh)[1])


def test_half_written_checkpoint_files_do_not_break_resume(tmp_path):
    ck = tmp_path / "ck"
    with pytest.raises(Kill):
        run(ck, kill_at=3_000)
    (ck / ".checkpoint.json.999.tmp").write_text('{"trunc')  # what a kill during a write leaves
    (ck / ".arrays-000000003000.npz.999.tmp").write_bytes(b"\x00" * 10)
    (ck / "pipeline_curve.json").write_text("{}")  # a caller's resume state kept beside ours
    final = run(ck)
    ref = run(tmp_path / "ref")
    assert np.array_equal(sorted_table(final)[1], sorted_table(ref)[1])
    assert not ck.exists()  # the finished run removed the directory, the caller's state with it


def test_segment_ends_cover_eval_points_checkpoints_and_end():
    assert segment_ends(2_500, [0, 100, 1_000, 2_500], 1_000) == [100, 1_000, 2_000, 2_500]
    assert segment_ends(10, [], 100) == [10]


@pytest.mark.parametrize(
    "schedule, expected",
    [
        ({"schedule": "constant", "start": 0.3}, [0.3, 0.3, 0.3]),
        ({"schedule": "linear", "start": 1.0, "end": 0.1, "decay_games": 1_000}, [1.0, 0.55, 0.1]),
        ({"schedule": "exponential", "start": 1.0, "end": 0.1, "decay_games": 500},
         [1.0, 0.1 + 0.9 * np.exp(-1), 0.1 + 0.9 * np.exp(-4)]),
    ],
)
def test_exploration_schedules(schedule, expected):
    ex = Exploration(**schedule)
    assert [ex.epsilon(g) for g in (0, 500, 2_000)] == pytest.approx(expected)


def test_registry_and_errors(tmp_path):
    assert "tabular_q" in learner_names() and learner_params_model("tabular_q").__name__ == "TabularQParams"
    with pytest.raises(LearnError, match="unknown learner 'bogus'; known learners: .*tabular_q"):
        make_learner("bogus")
    learner = make_learner("tabular_q")
    kw = dict(seed=0, checkpoint_dir=tmp_path / "ck", on_eval=lambda n, a: None)
    with pytest.raises(LearnError, match=r"eval points \[20\] lie outside 0..10"):
        learner.train(TTT, {"games": 10}, eval_points=[5, 20], **kw)
    with pytest.raises(LearnError, match="tabular_q params: gama: Extra inputs are not permitted"):
        learner.train(TTT, {"games": 10, "gama": 1}, eval_points=[], **kw)
    with pytest.raises(LearnError, match="start '1234567': the game is already over"):
        learner.train(TTT, {"games": 10, "start": "1234567"}, eval_points=[], **kw)
    with pytest.raises(LearnError, match="start '11'.*illegal"):
        learner.train(TTT, {"games": 10, "start": "11"}, eval_points=[], **kw)
    with pytest.raises(Exception, match="unknown agent 'bogus'"):
        learner.train(TTT, {"games": 10, "opponent": "bogus"}, eval_points=[], **kw)
    assert "\n" not in str(LearnError("x"))


def test_every_learner_has_one_params_model_and_unit_wherever_it_is_read():
    """A torch learner keeps its params model in learn/<x>_params.py; the registry gives the learner's own."""
    from boardrl.learn import learner_class, learner_unit

    for name in learner_names():
        assert learner_params_model(name) is learner_class(name).params_model, name
        assert learner_unit(name) == learner_class(name).unit in ("games", "steps"), name


def test_validating_the_shipped_params_imports_no_torch():
    """Every pipeline stage validates params.yaml first; torch costs a stage about 1.4 s to import."""
    import subprocess
    import sys

    code = ("import sys\nfrom boardrl.config import load_params\np = load_params('params.yaml')\n"
            "[(p.budget(e), p.learner_params(e)) for e in p.experiments]\n"
            "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.'))[:3])")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
