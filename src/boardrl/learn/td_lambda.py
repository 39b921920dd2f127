"""TD(lambda) afterstate value learning with lambda-returns: seed 003's TD(lambda) (SEEDS.md "Seed 003").

Lambda-returns rather than eligibility traces, as the seed: the memory keeps whole episodes, and every epoch
all returns are recomputed from the current network (learn/lambda_returns.py), so replayed samples never carry
stale targets older than one epoch; traces would tie the update to the order moves are played and rule out
replay.  Seed values: lr 0.01, gamma 0.9, lambda 0.6, every move stored, 1 update (batch 32) per game,
epsilon 0.1, 2,000 epochs x 100 games, network 18 -> 54 -> 27 -> 9 -> 1 tanh, no target network.
"""

from __future__ import annotations

from boardrl.learn.value_params import TDLambdaParams
from boardrl.learn.value_selfplay import SelfPlayValueLearner


class TDLambdaLearner(SelfPlayValueLearner):
    name = "td_lambda"
    params_model = TDLambdaParams
    values = "afterstate"
    lambda_returns = True


LEARNER = TDLambdaLearner
