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
