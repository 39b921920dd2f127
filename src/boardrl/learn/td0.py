"""TD(0) afterstate value learning with a target network: seed 003's TD(0) (SEEDS.md "Seed 003", Algorithms).

V(afterstate) from the side to move (agents/afterstate.py), target r + gamma * notterm * (+/-) V_target(s'),
10k memory of non-exploratory samples, 900 SGD updates (batch 32, lr 0.005) after each epoch of 100 games,
target synced each epoch, gamma 0.99, epsilon 0.1; seed network 18 -> 54 -> 27 -> 9 -> 1 tanh (its side flag
is redundant with side-relative planes).  The seed's TD(0) crashed at its first evaluation; this one plays.
"""

from __future__ import annotations

from boardrl.learn.value_params import TD0Params
from boardrl.learn.value_selfplay import SelfPlayValueLearner


class TD0Learner(SelfPlayValueLearner):
    name = "td0"
    params_model = TD0Params
    values = "afterstate"
    lambda_returns = False


LEARNER = TD0Learner
