"""The report's section on what another machine reproduces: by the learner's arithmetic and its seeds."""

from __future__ import annotations

import sys

import pytest

from boardrl.learn import learner_class, learner_names
from boardrl.report.document import Bullets, Heading
from boardrl.report.reproducibility import MIN_SEEDS, arithmetic, reproducibility_blocks
from boardrl.report.results import Experiment


def exp(exp_id: str, learner: str, seeds: int) -> Experiment:
    return Experiment(id=exp_id, game="tictactoe", learner=learner, profile="default", unit="games", budget=10,
                      seeds={k: None for k in range(seeds)})


def imports_torch(cls: type) -> bool:
    """Whether the module of the class or of one of its learner bases imports torch itself."""
    return any("torch" in vars(sys.modules[c.__module__]) for c in cls.__mro__
               if c.__module__.startswith("boardrl.learn"))


@pytest.mark.parametrize("name", learner_names())
def test_a_learner_declares_torch_arithmetic_exactly_when_it_uses_torch(name):
    cls = learner_class(name)
    assert arithmetic(name) == ("torch" if imports_torch(cls) else "numpy")


def text_of(block: Bullets) -> list[str]:
    return ["".join(span.text for span in item) for item in block.items]


def test_numpy_and_torch_experiments_are_listed_apart_and_one_seed_torch_runs_are_flagged():
    blocks = reproducibility_blocks([exp("q", "tabular_q", 3), exp("d", "dqn", 1), exp("az", "alphazero", MIN_SEEDS)])
    assert isinstance(blocks[0], Heading)
    numpy_line, torch_line, few_line = text_of(blocks[-1])
    assert "any machine" in numpy_line and "q (3 seeds)" in numpy_line and "dqn" not in numpy_line
    assert "d (1 seed)" in torch_line and "az (3 seeds)" in torch_line
    assert "d (1 seed)" in few_line and "az" not in few_line


def test_no_experiments_no_section():
    assert reproducibility_blocks([]) == []


def test_a_few_seed_experiments_other_seeds_are_named_where_a_study_trained_them_unchanged():
    """A study that trains seeds 1 and 2 of a one-seed experiment with the profile's settings holds its spread over
    training runs; a study that changes its settings (or has not run) does not, and seeds the profile already
    trains are not counted again."""
    from boardrl.report.studies import StudyResults

    def study(name: str, variation: str, unchanged: bool, seeds: list[int]) -> StudyResults:
        row = {"experiment": "d", "variation": variation}
        return StudyResults(name, "", [row], None, {"d": seeds}, frozenset({variation} if unchanged else ()))

    studies = [study("more", "default", True, [0, 1, 2]), study("changed", "lr", False, [1, 2]),
               StudyResults("waiting", "", None, None, {"d": [5]}, frozenset({"default"}))]
    *_, studied = text_of(reproducibility_blocks([exp("d", "dqn", 1), exp("az", "alphazero", 3)], None, studies)[-1])
    assert studied.endswith("study more: d seeds 1, 2")
    assert "changed" not in studied and "waiting" not in studied
    assert not any("study" in line for line in text_of(reproducibility_blocks([exp("d", "dqn", 1)], None,
                                                                              studies[1:])[-1]))
