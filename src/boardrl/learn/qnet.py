"""Q-network learning with a target network: seed 003's Q-learning (SEEDS.md "Seed 003", Algorithms).

Q(s, a) for the player to move (negamax, side-relative planes: 9 outputs instead of the seed's 18 white/black
outputs), target r + gamma * notterm * (+/-) max over the successor's legal actions of Q_target, **each sample
from its own successor** (the seed used the first sample's successor for the whole batch).  Seed values:
lr 0.01, gamma 0.9, exploratory moves not stored, 900 updates (batch 32) per epoch of 100 games, target synced
each epoch, epsilon 0.1, 400 epochs, network 18 -> 54 -> 54 -> 27 -> 9 tanh.
"""

from __future__ import annotations

from boardrl.learn.value_params import QNetParams
from boardrl.learn.value_selfplay import SelfPlayValueLearner


class QNetLearner(SelfPlayValueLearner):
    name = "qnet"
    params_model = QNetParams
    values = "q"
    lambda_returns = False


LEARNER = QNetLearner
