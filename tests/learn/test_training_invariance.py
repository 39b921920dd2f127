"""A trained model is a function of (game, learner params, seed): not of the curve points, not of
``checkpoint_every``, not of where a run was killed and resumed.

Every registered learner is found through the registry (``learner_names``) and trained from its declared
``small_run`` four ways; the saved model's bytes must be equal each time.  The curve points and checkpoint
periods are chosen to fall inside the learners' units of work (waves of games side by side, epochs, vector
steps, self-play batches), which is where a segment end used to change the training.  The evaluation callback
really plays the snapshot (a few games against ``random``), as the pipeline's does, so an evaluation that
disturbed the learner's state would show too.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from boardrl.agents import make_agent
from boardrl.evaluate.match import play_match
from boardrl.games import make_game
from boardrl.learn import learner_class, learner_names, make_learner

SEED = 5
BIG = 10**9  # checkpoint_every that never falls inside the run


class Kill(Exception):
    """Stands for the process dying inside an evaluation."""


def model_hash(agent, where: Path) -> str:
    """sha256 over the saved model's files (names and bytes)."""
    agent.save(where)
    digest = hashlib.sha256()
    for f in sorted(p for p in where.rglob("*") if p.is_file()):
        digest.update(f.relative_to(where).as_posix().encode())
        digest.update(f.read_bytes())
    return digest.hexdigest()


def train(name: str, tmp: Path, tag: str, fractions: list[float], checkpoint_every: int | None,
          kill_at_eval: int | None = None) -> tuple[str, dict[int, int]]:
    """Train ``name``'s small run; the curve at ``fractions`` of the budget.  Returns (model hash, curve points)."""
    game_id, params = learner_class(name).small_run
    game = make_game(game_id)
    learner = make_learner(name)
    total = learner.budget(learner.check_params(params))
    points = sorted({0, total, *(max(1, int(f * total)) for f in fractions)})
    every = {"checkpoint_every": checkpoint_every} if checkpoint_every else {"checkpoint_every": BIG}
    random = make_agent(game, "random")
    calls = [0]

    def on_eval(step: int, agent) -> dict:
        calls[0] += 1
        if kill_at_eval is not None and calls[0] == kill_at_eval:
            raise Kill
        result = play_match(game, agent, random, 4, seats="alternate", seed=step)
        return {"wins": result.combined.wins}

    agent = learner.train(game, {**params, **every}, seed=SEED, checkpoint_dir=tmp / tag / "ck",
                          eval_points=points, on_eval=on_eval)
    assert set(learner.curve_points) == set(points)
    for requested, measured in learner.curve_points.items():
        assert requested <= measured <= total
    return model_hash(agent, tmp / tag / "model"), learner.curve_points


def small_learners() -> list[str]:
    return list(learner_names())


@pytest.mark.parametrize("name", small_learners())
def test_every_learner_declares_a_small_run(name):
    assert learner_class(name).small_run is not None, (
        f"learner {name} declares no small_run (game, params): the invariance test cannot cover it")


@pytest.mark.parametrize("name", small_learners())
def test_model_does_not_depend_on_curve_points_checkpoints_or_kills(name, tmp_path):
    assert learner_class(name).small_run is not None, f"{name} declares no small_run (game, params)"
    reference, _ = train(name, tmp_path, "sparse", [], None)
    dense, measured = train(name, tmp_path, "dense", [0.13, 0.29, 0.41, 0.67, 0.83], None)
    assert dense == reference, f"{name}: the curve points changed the model"
    checkpoints, _ = train(name, tmp_path, "ckpt", [0.29], checkpoint_every=37)
    assert checkpoints == reference, f"{name}: checkpoint_every changed the model"
    with pytest.raises(Kill):  # dies at its fourth evaluation, with checkpoints behind it
        train(name, tmp_path, "killed", [0.13, 0.29, 0.41, 0.67, 0.83], checkpoint_every=53, kill_at_eval=4)
    assert any((tmp_path / "killed" / "ck").iterdir()), f"{name}: no checkpoint was left to resume from"
    resumed, resumed_points = train(name, tmp_path, "killed", [0.13, 0.29, 0.41, 0.67, 0.83], checkpoint_every=53)
    assert resumed == reference, f"{name}: kill and resume changed the model"
    assert resumed_points == measured  # the resumed run's curve was measured at the same counts
