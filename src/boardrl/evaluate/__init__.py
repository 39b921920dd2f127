"""Evaluation: matches between agents, W/D/L statistics with Wilson intervals, optimal-move rates.

Entry points: ``play_match`` (evaluate/match.py), ``SeatStats`` and ``wilson_interval`` (evaluate/stats.py),
``optimal_move_rate`` and ``position_set`` (evaluate/optimal_rate.py).  The UCI Connect-4 start positions are
regenerated in data/uci_positions.py, and agents are judged from them by label in evaluate/uci_protocols.py.
A tic-tac-toe agent's exact loss probability against ``perfect`` is walked over the whole tree in
evaluate/exact_loss.py.
"""

from boardrl.evaluate.match import MatchResult, play_match
from boardrl.evaluate.optimal_rate import OptimalRate, optimal_move_rate, position_set
from boardrl.evaluate.stats import SeatStats, combine, wilson_interval, z_for

__all__ = [
    "MatchResult", "OptimalRate", "SeatStats", "combine", "optimal_move_rate", "play_match", "position_set",
    "wilson_interval", "z_for",
]
