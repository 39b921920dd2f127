"""The evaluation file's model: a well-formed file passes whole (extra blocks included), and each kind of damage
is one line naming the field."""

from __future__ import annotations

import copy

import pytest

from boardrl.evaluate.schema import EvaluationFile, check_evaluation


def _outcomes(win: float, games: int) -> dict:
    return {"win": win, "draw": 0.0, "loss": round(1 - win, 6), "games": games}


def _spread(values: list) -> dict:
    return {"iqm": sum(values) / len(values), "ci": [min(values), max(values)], "values": values}


def evaluation(seeds=(0, 1)) -> dict:
    seat = {"as_first": _outcomes(0.9, 50), "as_second": _outcomes(0.7, 50), "combined": _outcomes(0.8, 100),
            "mean_length": 7.5}
    return {
        "experiment": "tictactoe_q", "game": "tictactoe", "learner": "tabular_q", "profile": "default",
        "unit": "games", "budget": 1000,
        "seeds": {str(k): {"opponents": {"random": seat}, "optimal_move_rate": 0.95,
                           "exact_vs_perfect": {"as_first": {"loss": 0.0}, "as_second": {"loss": 0.01}},
                           "network_alone": None,
                           "provenance": {"experiment": "tictactoe_q", "game": "tictactoe", "learner": "tabular_q",
                                          "seed": k, "unit": "games", "budget": 1000, "git_commit": "abc"}}
                  for k in seeds},
        "across_seeds": {"seeds": list(seeds),
                         "opponents": {"random": {o: _spread([0.8] * len(seeds)) for o in ("win", "draw", "loss")}},
                         "optimal_move_rate": _spread([0.95] * len(seeds))},
    }


def test_a_well_formed_file_passes_with_its_extra_blocks():
    model = check_evaluation(evaluation())
    assert isinstance(model, EvaluationFile)
    assert sorted(model.seeds) == [0, 1]
    assert model.seeds[0].opponents["random"].combined.games == 100
    assert model.seeds[1].provenance.seed == 1
    assert model.model_dump()["seeds"][0]["network_alone"] is None  # blocks not typed here pass through


@pytest.mark.parametrize("damage, message", [
    (lambda d: d["seeds"]["0"]["opponents"]["random"].pop("combined"),
     "seeds.0.opponents.random.combined: Field required"),
    (lambda d: d["seeds"]["1"].update(optimal_move_rate=1.5),
     "seeds.1: optimal_move_rate must be a number in [0, 1] or null, found 1.5"),
    (lambda d: d.update(unit="epochs"), "unit: Input should be 'games' or 'steps'"),
    (lambda d: d.update(budget=-1), "budget: Input should be greater than or equal to 0"),
    (lambda d: d.update(seeds={}), "seeds: Dictionary should have at least 1 item after validation, not 0"),
    (lambda d: d["across_seeds"]["opponents"]["random"]["loss"]["values"].pop(),
     "across_seeds: opponents.random.loss.values must hold one value per seed (2)"),
    (lambda d: d["across_seeds"].update(seeds=[0, 5]),
     "across_seeds.seeds must list seeds of 'seeds' ([0, 1]), found [0, 5]"),
    (lambda d: d["seeds"]["1"]["provenance"].update(seed=3), "seeds.1.provenance: seed is 3, expected 1"),
    (lambda d: d["seeds"]["0"]["opponents"]["random"]["as_first"].update(games=-2),
     "seeds.0.opponents.random.as_first.games: Input should be greater than or equal to 0"),
])
def test_each_damage_is_one_line_naming_the_field(damage, message):
    data = copy.deepcopy(evaluation())
    damage(data)
    with pytest.raises(ValueError) as info:
        check_evaluation(data)
    assert str(info.value) == message
