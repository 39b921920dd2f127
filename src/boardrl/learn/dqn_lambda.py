"""DQN(lambda): Q-network trained on lambda-returns over episodes, seed 003's DQN(lambda) (SEEDS.md "Seed 003").

G_t = r + gamma * (+/-) [lambda G_{t+1} + (1 - lambda) max_a Q(s_{t+1}, a)] with each sample's **own**
successor (the seed took the first sample's), recomputed for the whole memory every epoch from the single
(online) network (learn/lambda_returns.py).  Seed values: lr 0.01, gamma 0.9, lambda 0.6, 1 update (batch 32)
per game, epsilon 0.1, 2,000 epochs x 100 games, network 18 -> 54 -> 54 -> 27 -> 9 tanh.
"""

from __future__ import annotations

from boardrl.learn.value_params import DQNLambdaParams
from boardrl.learn.value_selfplay import SelfPlayValueLearner


class DQNLambdaLearner(SelfPlayValueLearner):
    name = "dqn_lambda"
    params_model = DQNLambdaParams
    values = "q"
    lambda_returns = True


LEARNER = DQNLambdaLearner
