"""evaluate/exact_loss.py: the exact loss probability against ``perfect`` by walking the whole tic-tac-toe tree, and
how the evaluate stage reports it (per seed, across seeds, flat metrics)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from boardrl.agents import make_agent
from boardrl.agents.base import Agent
from boardrl.evaluate.exact_loss import ExactLossError, exact_loss, seat_loss
from boardrl.evaluate.match import play_match
from boardrl.evaluate.stats import wilson_interval
from boardrl.experiments.evaluate import exact_spread, exact_vs_perfect, headline, seed_metrics, spread
from boardrl.games import make_game
from boardrl.solvers.tictactoe import TicTacToeReferee

GAME = make_game("tictactoe")
REFEREE = TicTacToeReferee(GAME)
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


class FirstOptimal(Agent):
    """The referee's first optimal move: deterministic and never loses value."""

    def act(self, state, rng: np.random.Generator) -> int:
        return int(REFEREE.solve(state).optimal_moves[0])


class EdgeAgainstCorner(FirstOptimal):
    """FirstOptimal, except one deliberate mistake: answers the opening in corner 1 with edge 2, not the centre."""

    def act(self, state, rng: np.random.Generator) -> int:
        if (int(state.x), int(state.o)) == (0b1, 0):
            return 1
        return super().act(state, rng)


class LowestCell(Agent):
    """Always the lowest-numbered empty cell: deterministic, and beatable."""

    def act(self, state, rng: np.random.Generator) -> int:
        return int(np.flatnonzero(GAME.legal_moves(state))[0])


class RandomTies(Agent):
    """One of the two lowest empty cells at random: a greedy agent's random tie-break."""

    def act(self, state, rng: np.random.Generator) -> int:
        legal = np.flatnonzero(GAME.legal_moves(state))
        return int(legal[rng.integers(min(2, len(legal)))])


# ---------------------------------------------------------------------------------------------- brute force
def _winner(cells: tuple[int, ...]) -> int | None:
    """0 (X) or 1 (O) for a completed line on a board of 9 cells (-1 empty, 0 X, 1 O), else None."""
    for a, b, c in LINES:
        if cells[a] >= 0 and cells[a] == cells[b] == cells[c]:
            return cells[a]
    return None


def brute_random_loss(seat: int) -> Fraction:
    """Random in ``seat`` against perfect: every line of the game tree followed on a plain list board (no memo,
    no Game), the solver asked only for perfect's optimal replies."""

    def walk(cells: tuple[int, ...], state, mover: int) -> Fraction:
        w = _winner(cells)
        if w is not None:
            return Fraction(int(w != seat))
        empty = [i for i in range(9) if cells[i] < 0]
        if not empty:
            return Fraction(0)
        moves = empty if mover == seat else list(REFEREE.solve(state).optimal_moves)
        return sum((walk(cells[:m] + (mover,) + cells[m + 1:], GAME.play(state, m), 1 - mover) for m in moves),
                   Fraction(0)) / len(moves)

    return walk((-1,) * 9, GAME.initial_state(), 0)


# ---------------------------------------------------------------------------------------------- the walk
def test_perfect_and_a_value_keeping_player_never_lose():
    for agent in (make_agent(GAME, "perfect"), FirstOptimal(GAME)):
        result = exact_loss(agent)
        assert result.as_first.loss == result.as_second.loss == 0
        assert result.flawless and result.value_losing_moves == 0


def test_random_against_perfect_equals_a_brute_force_count():
    """Random is walked over its known distribution (uniform over the legal moves); the figures equal an independent
    recursion over every line of play, as exact fractions."""
    result = exact_loss(make_agent(GAME, "random"), REFEREE)
    assert result.as_first.loss == brute_random_loss(0) == Fraction(2645, 3402)
    assert result.as_second.loss == brute_random_loss(1) == Fraction(75257, 77760)
    assert not result.flawless and result.value_losing_moves > 0


def test_random_against_perfect_agrees_with_played_games():
    games = 2000
    p = exact_loss(make_agent(GAME, "random"), REFEREE)
    match = play_match(GAME, make_agent(GAME, "random"), make_agent(GAME, "perfect"), games, seats="alternate", seed=3)
    for seat, exact in ((match.as_first, p.as_first.loss), (match.as_second, p.as_second.loss)):
        lo, hi = wilson_interval(seat.losses, seat.games, 0.999)
        assert lo <= float(exact) <= hi, (seat.losses, seat.games, float(exact))


def test_one_deliberate_mistake_by_hand():
    """Perfect opens uniformly among its 9 optimal moves (every opening draws).  After the corner opening 1, the
    centre is the only drawing answer (checked below); edge 2 loses, and from then on perfect keeps the win, so the
    agent loses exactly when perfect opened in 1: probability 1/9 as second.  As first the agent never meets a
    one-stone board: 0."""
    after_corner = GAME.play(GAME.initial_state(), 0)
    assert REFEREE.solve(after_corner).optimal_moves == (4,)
    result = exact_loss(EdgeAgainstCorner(GAME), REFEREE)
    assert result.as_second.loss == Fraction(1, 9)
    assert result.as_second.value_losing_moves == ("1 -> 2",)
    assert result.as_first.loss == 0 and result.as_first.value_losing_moves == ()
    assert result.value_losing_moves == 1 and not result.flawless


def test_lowest_cell_as_first_loses_for_sure_at_one_known_move():
    """X 1 (keeps the draw); perfect's only optimal reply is the centre; X 2 (still a draw); O must block at 3 and
    now threatens 3-5-7; X plays 4 instead of blocking at 7: the one value-losing move, and O wins every game."""
    result = seat_loss(LowestCell(GAME), 0, REFEREE)
    assert result.loss == 1
    assert result.value_losing_moves == ("1523 -> 4",)


def test_an_agent_that_draws_at_random_is_refused():
    with pytest.raises(ExactLossError, match="not deterministic at \\(start\\)"):
        exact_loss(RandomTies(GAME))


def test_other_games_are_a_one_line_error():
    agent = make_agent(make_game("connect4"), "random")
    with pytest.raises(ExactLossError) as info:
        exact_loss(agent)
    assert "tic-tac-toe only" in str(info.value) and "connect4" in str(info.value)
    assert "\n" not in str(info.value)


# ---------------------------------------------------------------------------------------------- the evaluate stage
def _results(exact: dict | None) -> dict:
    block = {"win": 0.5, "draw": 0.5, "loss": 0.0, "games": 10}
    out = {"opponents": {"perfect": {"as_first": block, "as_second": block, "combined": block}},
           "optimal_move_rate": 1.0, "uci": None}
    if exact is not None:
        out["exact_vs_perfect"] = exact
    return out


def test_evaluate_stage_block_metrics_and_headline():
    flawless = exact_vs_perfect(GAME, FirstOptimal(GAME))
    flawed = exact_vs_perfect(GAME, EdgeAgainstCorner(GAME))
    refused = exact_vs_perfect(GAME, RandomTies(GAME))
    assert exact_vs_perfect(make_game("connect4"), make_agent(make_game("connect4"), "random")) is None
    assert flawed["as_second"]["loss"] == pytest.approx(1 / 9) and flawed["value_losing_moves"] == 1
    assert refused["as_first"] is None and "not deterministic" in refused["not_measured"]

    m = seed_metrics(_results(flawed))
    assert m["exact_vs_perfect/as_first/loss"] == 0.0
    assert m["exact_vs_perfect/as_second/loss"] == pytest.approx(1 / 9)
    assert m["exact_vs_perfect/value_losing_moves"] == 1
    assert not any(k.startswith("exact_vs_perfect") for k in seed_metrics(_results(refused)))
    searching = {**_results(flawless), "network_alone": {"optimal_move_rate": 1.0, "exact_vs_perfect": flawed}}
    assert seed_metrics(searching)["network_alone/exact_vs_perfect/as_second/loss"] == pytest.approx(1 / 9)

    per_seed = {0: _results(flawless), 1: _results(flawed), 2: _results(flawless)}
    agg = spread(per_seed, 0)["exact_vs_perfect"]
    assert (agg["flawless_seeds"], agg["measured_seeds"]) == (2, 3)
    assert agg["as_second"]["values"] == [0.0, pytest.approx(1 / 9), 0.0]
    top = headline("x", {"budget": 1, "across_seeds": spread(per_seed, 0)})["exact_vs_perfect"]
    # the IQM of three values is their mean
    assert top == {"flawless_seeds": 2, "loss_as_first": 0.0, "loss_as_second": pytest.approx(1 / 27, abs=1e-5)}

    partial = exact_spread([flawless, refused], 0)
    assert (partial["flawless_seeds"], partial["measured_seeds"], partial["as_first"]) == (1, 1, None)
    assert exact_spread([None, None], 0) is None
    assert "exact_vs_perfect" not in spread({0: _results(None)}, 0)


def test_report_shows_each_seeds_exact_loss():
    from boardrl.report.links import Links
    from boardrl.report.markdown import render
    from boardrl.report.evaluation import AcrossReading, SeedReading
    from boardrl.report.results import Experiment, SeedResult
    from boardrl.report.sections import exact_loss_blocks

    blocks = {0: exact_vs_perfect(GAME, FirstOptimal(GAME)), 1: exact_vs_perfect(GAME, EdgeAgainstCorner(GAME)),
              2: exact_vs_perfect(GAME, RandomTies(GAME))}
    seeds = {k: SeedResult(evaluation=SeedReading.model_validate(_results(b))) for k, b in blocks.items()}
    across = AcrossReading.model_validate({"seeds": list(blocks), "opponents": {},
                                           "exact_vs_perfect": exact_spread(list(blocks.values()), 0)})
    e = Experiment("x", "tictactoe", "td0", "default", "games", 1, seeds, across_seeds=across)
    md = render(exact_loss_blocks(e, Links()))
    assert "1 of 2 measured seed(s) never lose" in md
    assert "seed 0: 0.0% as first, 0.0% as second; 0 value-losing moves" in md
    assert "seed 1: 0.0% as first, 11.1% as second; 1 value-losing move at" in md
    assert "seed 2: not measured (exact loss: randomties is not deterministic" in md
    other = Experiment("y", "connect4", "dqn", "default", "steps", 1,
                       {0: SeedResult(evaluation=SeedReading.model_validate(_results(None)))})
    assert exact_loss_blocks(other, Links()) == []
