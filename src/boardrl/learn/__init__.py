"""Training algorithms that produce agents.

``make_learner(name)`` gives a learner, ``LEARNER_PARAMS[name]`` its pydantic params model (extra keys
forbidden, defaults reproduce the seed the learner comes from), and ``load_agent(game, agent_name, model_dir)``
restores what a learner's agent saved.  The contract every learner keeps is in ``learn/base.py``.
"""

from __future__ import annotations

from boardrl.agents.learned import load_agent
from boardrl.learn.base import EvalCallback, Exploration, Learner, LearnError, LearnerParams
from boardrl.learn.tabular_q import TabularQLearner, TabularQParams

_LEARNERS: dict[str, type[Learner]] = {"tabular_q": TabularQLearner}

#: Each learner's params model, by learner name (the pipeline's config schema embeds these).
LEARNER_PARAMS: dict[str, type[LearnerParams]] = {name: cls.params_model for name, cls in _LEARNERS.items()}
LEARNER_NAMES = tuple(_LEARNERS)


def make_learner(name: str) -> Learner:
    """The learner called ``name``; ``LearnError`` naming the known learners otherwise."""
    cls = _LEARNERS.get(name)
    if cls is None:
        raise LearnError(f"unknown learner {name!r}; known learners: {', '.join(LEARNER_NAMES)}")
    return cls()


__all__ = [
    "EvalCallback", "Exploration", "LEARNER_NAMES", "LEARNER_PARAMS", "Learner", "LearnError", "LearnerParams",
    "TabularQLearner", "TabularQParams", "load_agent", "make_learner",
]
