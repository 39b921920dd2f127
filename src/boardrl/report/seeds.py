"""Every number the seeds published (../shared/SEEDS.md), as data, with how to find ours on the same protocol.

Each ``SeedNumber`` names our game id, the seed's agent and protocol in words, our spec of the seed's opponent,
the seat (from the seed agent's side: as_first = it moved first), the kind of figure (``metric``) and the
figure as published, and optionally our ``learner`` of the same kind.  The report looks up our experiments on
the same game (and that learner, where one is named), opponent and seat and prints our figure of the same kind
beside it, one row per matching experiment id.

Conventions: W/D/L percentages from the seed agent's side.  Seed 002 prints "agent W / opponent W / tie"; the
rows below are converted to W / D / L.  Seed 003 reports a score (win 1, draw 0.5, loss 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Metric = Literal["win", "wdl", "win_draw", "score", "uci_win", "text"]


@dataclass(frozen=True)
class SeedNumber:
    seed: str
    game: str
    agent: str
    protocol: str
    opponent: str | None  # our agent spec of the seed's opponent; None: no counterpart in our evaluation
    seat: str  # as_first | as_second | combined
    metric: Metric
    published: str
    source: str
    uci_label: str | None = None
    ours_note: str | None = None  # for figures no evaluation file holds (e.g. Q-value traces)
    learner: str | None = None  # our learner of the same kind; None: compare with every learner on the game


def _s000() -> list[SeedNumber]:
    src = "SEEDS.md seed 000, Reported results"
    tests = "tests/learn/test_tabular_q.py"
    trace = "Q-value trace at s0 (X on 3 and 5, O on 7 and 8, X to move)"
    uci = ("agent is X to move from a fresh random UCI position of the label, vs Random, 1,000 games per "
           "label")
    out = [
        SeedNumber("000", "tictactoe", "tabular Q-learning vs AlphaBeta, 800 episodes from s0", trace,
                   "seed000_alphabeta", "as_first", "text", "Q(s0,9) → +1.0, Q(s0,{1,2,4,6}) → −1.0",
                   f"{src}, exp 01", ours_note=f"reproduced: {tests}::test_seed000_exp01_against_full_depth_alphabeta"),
        SeedNumber("000", "tictactoe", "tabular Q-learning, self-play, 4,000 episodes from s0", trace, None,
                   "as_first", "text", "same values, converged after about 3,500 episodes", f"{src}, exp 02",
                   ours_note=f"reproduced: {tests}::test_seed000_exp02_self_play_from_s0"),
        SeedNumber("000", "tictactoe", "tabular Q-learning, self-play, 70,000 episodes",
                   "GreedyQ always X vs Random, 1,000 games", "random", "as_first", "wdl",
                   "\"almost perfect\" (figure only, no number)", f"{src}, exp 03", learner="tabular_q"),
    ]
    for label, fig in (("win", "94% (56% before training)"), ("draw", "92% (50% before training)"),
                       ("loss", "90% (45% before training)")):
        out.append(SeedNumber("000", "connect4", "approximate Q-learning (conv net) vs Random, 15,000 episodes",
                              uci, "random", "as_first", "uci_win", fig, f"{src}, exp 04 ({label} positions)",
                              uci_label=label))
    return out


def _s001() -> list[SeedNumber]:
    src = "SEEDS.md seed 001, Reported results"
    proto = "1,000 games, seats alternating (500 + 500); the seed does not say what the % measures (read as wins)"
    agent = "Q-table / DQN homework"
    out = []
    for game, figs in (("dots_and_boxes_2x2", ("99.99%", "80.23%", "78.54%")),
                       ("dots_and_boxes_3x3", ("98.45%", "20.24%", "2.35%"))):
        for opp, fig in zip(("random", "moderate", "advanced"), figs):
            out.append(SeedNumber("001", game, agent, proto, opp, "combined", "win", fig, src))
        for opp, fig in (("random", "win >= 95%"), ("moderate", "W+D >= 50%"), ("advanced", "W+D >= 25%")):
            metric: Metric = "win" if opp == "random" else "win_draw"
            out.append(SeedNumber("001", game, agent, "the seed's pass thresholds", opp, "combined", metric, fig,
                                  f"{src}, seed thresholds"))
    log = "mattdeak repo models/size4/logs.txt, log at game 1,000,000"
    for opp, fig in (("random", "100 / 0 / 0"), ("moderate", "25.4 / 15.9 / 58.7"), ("advanced", "3.6 / 4.0 / 92.4")):
        out.append(SeedNumber("001", "dots_and_boxes_4x4", "DQN_CMM, self-play vs frozen copy, 1,000,000 games",
                              "1,000 games, seats alternating", opp, "combined", "wdl", fig,
                              f"SEEDS.md seed 001, {log}"))
    return out


def _s002() -> list[SeedNumber]:
    src = "SEEDS.md seed 002, Reported results"
    ttt = [  # agent, opponent, W / D / L (converted from agent W / opponent W / tie), games
        ("QT, trained vs Random 100k", "random", "95.20 / 4.80 / 0.00", "10,000"),
        ("QT, trained vs Random 100k", "maxmin", "0 / 100 / 0", "1,000"),
        ("QT, trained vs a second QT 200k (README headline)", "random", "93.17 / 6.63 / 0.20", "10,000"),
        ("QT, trained vs a second QT 200k (README headline)", "maxmin", "0 / 100 / 0", "1,000"),
        ("QT, self-play snapshots 200k", "random", "82.24 / 11.34 / 6.42", "10,000"),
        ("QT, self-play snapshots 200k", "maxmin", "0 / 61.60 / 38.40", "1,000"),
        ("DQ, trained vs Random 150k", "random", "94.04 / 5.08 / 0.88", "10,000"),
        ("DQ, trained vs Random 150k", "maxmin", "0 / 83.80 / 16.20", "1,000"),
        ("DQ, trained vs SemiRandom 150k (README headline)", "semirandom", "94.59 / 5.12 / 0.29", "10,000"),
        ("DQ, trained vs SemiRandom 150k (README headline)", "maxmin", "0 / 100 / 0", "1,000"),
        ("DQ, self-play 200k", "semirandom", "92.07 / 7.70 / 0.23", "10,000"),
        ("DQ, self-play 200k", "maxmin", "0 / 100 / 0", "1,000"),
        ("DQ, trained vs a second DQ 200k", "semirandom", "92.43 / 7.42 / 0.15", "10,000"),
        ("DQ, trained vs a second DQ 200k", "maxmin", "0 / 100 / 0", "1,000"),
        ("DQ, trained vs MaxMin 10k", "semirandom", "38.74 / 29.07 / 32.19", "10,000"),
        ("DQ, trained vs MaxMin 10k", "maxmin", "0 / 50 / 50", "1,000"),
    ]
    c4 = [
        ("DQ, trained vs SemiRandom 200k", "semirandom", "61.50 / 0 / 38.50", "10,000"),
        ("DQ, trained vs SemiRandom 200k", "maxmin", "0 / 0 / 100", "10"),
        ("DQ, self-play 200k", "semirandom", "63.62 / 0 / 36.38", "10,000"),
        ("DQ, self-play 200k", "maxmin", "0 / 0 / 100", "10"),
    ]
    out = []
    for game, rows in (("tictactoe", ttt), ("connect4", c4)):
        for agent, opp, fig, n in rows:
            proto = f"{n} games, agent first in the first half, second in the rest"
            learner = "tabular_q" if agent.startswith("QT") else None  # QT: seed 002's Q-table agent
            out.append(SeedNumber("002", game, agent, proto, opp, "combined", "wdl", fig, src, learner=learner))
    return out


def _s003() -> list[SeedNumber]:
    src = "SEEDS.md seed 003, Reported results (read from the repo's plots)"
    proto = "1,000 games per seat vs Random, greedy play; score = win + draw / 2"
    out = []
    for agent, first, second in (("TD(lambda), 200k games", "~0.99", "~0.75-0.80"),
                                 ("DQN(lambda), 200k games", "~0.97", "~0.60"),
                                 ("Q-learning (network), 40k games", "~0.72", "~0.53"),
                                 ("Random player (baseline)", "0.65", "0.35")):
        out.append(SeedNumber("003", "tictactoe", agent, proto, "random", "as_first", "score", first, src))
        out.append(SeedNumber("003", "tictactoe", agent, proto, "random", "as_second", "score", second, src))
    proto = "300 games per seat vs Minimax (uniform among optimal moves), 25 simulations, temperature 0"
    out.append(SeedNumber("003", "tictactoe", "AlphaZero, 30 epochs x 2,000 games", proto, "perfect", "as_first",
                          "score", "0.50 from epoch 0-1", src))
    out.append(SeedNumber("003", "tictactoe", "AlphaZero, 30 epochs x 2,000 games", proto, "perfect", "as_second",
                          "score", "0.38 → 0.50 by epoch 8", src))
    return out


def _s004() -> list[SeedNumber]:
    src = "SEEDS.md seed 004, Learning agents (log_reinforce/q_results.csv)"
    proto = "100 games, fixed seats, from the empty board (agent W - L, no draws)"
    opps = ("hybrid", "cells", "sols", "flip", "conniption_random")
    table = {
        ("QLearn (1,727 games)", "as_first"): ("17-83", "43-57", "0-100", "0-100", "36-64"),
        ("QLearn (1,727 games)", "as_second"): ("0-100", "7-93", "49-51", "0-100", "12-88"),
        ("MinimaxQ (1,382 games)", "as_first"): ("0-100", "100-0", "100-0", "100-0 (headline)", "25-75"),
        ("MinimaxQ (1,382 games)", "as_second"): ("0-100", "0-100", "100-0", "0-100", "14-86"),
    }
    return [SeedNumber("004", "conniption", agent, proto, opp, seat, "win", fig, src)
            for (agent, seat), figs in table.items() for opp, fig in zip(opps, figs)]


SEED_NUMBERS: tuple[SeedNumber, ...] = (*_s000(), *_s001(), *_s002(), *_s003(), *_s004())


@dataclass(frozen=True)
class Deviation:
    """A place where this project deliberately does something other than a seed, and why."""

    seed: str
    where: str
    what: str


DEVIATIONS: tuple[Deviation, ...] = (
    Deviation("000", "learn/tabular_q.py",
              "Q values are stored from the view of the player to move (negamax) instead of player 0's view with "
              "max/min. It is the same update; written this way one greedy rule serves both seats, and games with "
              "extra turns (Dots and Boxes) keep the sign of the bootstrap when the same player moves again."),
    Deviation("000", "agents/learned.py",
              "Unseen Q entries start at N(0, 0.3) as in seed 000, but each draw is a hash of (seed, state, "
              "action) rather than the next number in visit order: the same distribution, independent of the "
              "order and batching of games, and a saved agent values unseen states exactly as training would."),
    Deviation("000", "learn/tabular_q.py",
              "Training games run side by side (parallel_games, 256 by default) on the batched engine; updates "
              "are applied one at a time in a fixed order, so runs are reproducible and resumable bit for bit. "
              "parallel_games = 1 is seed 000's one-game-at-a-time loop."),
    Deviation("001", "learn/tabular_q.py",
              "Seed 001 rewarded only the result (+-1 through tanh). With reward: margin our tabular learner is paid "
              "the final score margin instead, so its values are the margins the Dots and Boxes referee computes "
              "and its greedy play keeps the best margin, not just the win."),
    Deviation("all", "evaluate/match.py",
              "Every agent is evaluated from both seats with 95% Wilson intervals (seed 000 evaluated only as the "
              "first player, seed 004 used fixed seats, seed 001 and 002 reported only the pooled figure)."),
    Deviation("002", "games/",
              "A draw is worth 0 to both players; seed 002 paid (0.2, 0.5) at tic-tac-toe and (0.3, 0.3) at "
              "Connect 4."),
    Deviation("002", "agents/alphabeta.py",
              "Seed 002's MaxMin depth 4 is called maxmin, not \"perfect\": it is a 5-ply heuristic search. Our "
              "perfect player is backed by an exact referee."),
    Deviation("004", "games/conniption.py",
              "A four made by the 42nd piece wins for its player; seed 004's code checked the full board first "
              "and scored it a draw."),
)
