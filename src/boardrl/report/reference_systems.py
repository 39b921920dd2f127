"""Every number the reference systems published (../shared/SEEDS.md, where they are called seeds), as data:
what system produced it, on which protocol and budget, which experiment of ours reproduces that system, and how
the figure is compared.

Why it is shaped this way: a published figure may only stand beside the *same kind* of system on the *same
protocol*.  So each ``ReferenceNumber`` states the reference system's ``kind`` (tabular, neural, alphazero,
baseline), its training budget, the protocol (``our_choice`` marks protocols the system did not state), the
measure compared (``measure`` and the numeric ``value``; ``threshold`` for a reference system's pass mark), and
``reproduction``: the experiment ids of ours that reproduce that very system on that protocol (several when the
system reported one figure for several budgets).  ``BEST`` names, per game and kind, the one experiment we put
forward as our best agent of that kind, declared here in advance instead of picked per row after the fact.
``LEARNER_KINDS`` says which kind each of our learners is; the report (report/comparison.py) refuses to pair a row
with an experiment of another kind.

Conventions: W/D/L percentages from the reference system's agent's side.  Reference system 002 prints "agent W /
opponent W / tie"; the rows below are converted to W / D / L.  Reference system 003 reports a score (win 1, draw
0.5, loss 0).  A reproduction written ``tournament:<id>`` is a fixed-player round robin of params ``tournaments``
(baselines).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Metric = Literal["win", "wdl", "win_draw", "score", "uci_win", "trace"]
Measure = Literal["win", "win_draw", "score", "loss"]
Kind = Literal["tabular", "neural", "alphazero", "baseline"]

#: The kind of system each of our learners is (every learner module must be listed: a test checks it).
LEARNER_KINDS: dict[str, Kind] = {
    "tabular_q": "tabular", "qt": "tabular", "dots_table": "tabular", "seed004_q": "tabular",
    "dqn": "neural", "td0": "neural", "td_lambda": "neural", "qnet": "neural", "dqn_lambda": "neural",
    "seed000_afterstate": "neural", "seed001_dqn_cmm": "neural", "seed002_dq_pair": "neural",
    "alphazero": "alphazero",
}

#: Our best experiment of each kind on each game (the "best" column of the reference systems' tables).
BEST: dict[tuple[str, Kind], str] = {
    ("tictactoe", "tabular"): "tictactoe_tabular_q",
    ("dots_and_boxes_2x2", "tabular"): "dots_and_boxes_2x2_margin",
    ("dots_and_boxes_3x3", "tabular"): "dots_and_boxes_3x3_transfer",
    ("conniption", "tabular"): "conniption_tabular_q",
    ("tictactoe", "neural"): "tictactoe_td_lambda",
    ("connect4", "neural"): "connect4_dqn",
    ("dots_and_boxes_3x3", "neural"): "dots_and_boxes_3x3_dqn",
    ("conniption", "neural"): "conniption_dqn",
    ("tictactoe", "alphazero"): "tictactoe_alphazero",
    ("connect4", "alphazero"): "connect4_alphazero",
    ("dots_and_boxes_3x3", "alphazero"): "dots_and_boxes_3x3_alphazero",
    ("conniption", "alphazero"): "conniption_alphazero",
}

_DEFAULT_MEASURE: dict[str, Measure] = {"win": "win", "wdl": "win", "win_draw": "win_draw", "score": "score",
                                         "uci_win": "win"}


@dataclass(frozen=True)
class ReferenceNumber:
    system: str  # the reference system: 000 to 004
    game: str
    agent: str
    kind: Kind
    budget: str  # the system's training budget, in words
    protocol: str
    opponent: str | None  # our agent spec of the system's opponent; None: none (e.g. a Q-value trace)
    seat: str  # as_first | as_second | combined
    metric: Metric  # how the figure is printed
    published: str
    source: str
    value: float | None = None  # the published figure of ``measure`` as a fraction (None: no number published)
    measure: Measure | None = None  # compared quantity (default from ``metric``); "loss": lower is better
    threshold: bool = False  # the system's pass mark, not a result
    reproduction: tuple[str, ...] = ()  # our experiments (or tournament:<id>) reproducing this system
    our_choice: bool = False  # the protocol is ours: the system did not state it
    uci_label: str | None = None
    reason: str | None = None  # why ours differs, where our protocol or a fixed bug of the system explains it

    @property
    def compared(self) -> Measure | None:
        return self.measure or _DEFAULT_MEASURE.get(self.metric)


#: Exp 04: the system as published (its two bugs fixed), then ours on the same protocol.
_S000_UCI = ("connect4_seed000_uci", "connect4_seed000_dqn_uci")
_S000_UCI_REASON = ("connect4_seed000_uci is the system as published, its two bugs fixed (learn/seed000_afterstate.py); "
                    "the full profile trains its 15,000 episodes (the default profile does not define it: a "
                    "tenth of them did not judge the system). "
                    "connect4_seed000_dqn_uci is ours: Double DQN with a target network, Adam, Huber loss, batches of "
                    "128 every 64 steps, replay 100,000, epsilon over 100,000 steps, gamma 0.9, mirror images, a Q "
                    "value per move instead of a value per afterstate, and its own budget in steps")


def _s000() -> list[ReferenceNumber]:
    src = "SEEDS.md seed 000, Reported results"
    trace = "Q-value trace at s0 (X on 3 and 5, O on 7 and 8, X to move); converged = within 0.05 of +-1 to the end"
    uci = ("agent is X to move from a fresh random UCI position of the label, vs Random, 1,000 games per "
           "label")
    out = [
        ReferenceNumber("000", "tictactoe", "tabular Q-learning vs AlphaBeta from s0", "tabular", "800 episodes",
                        trace, "seed000_alphabeta", "as_first", "trace",
                        "Q(s0,9) → +1, Q(s0,{1,2,4,6}) → −1 after about 800 episodes", f"{src}, exp 01", value=800,
                        reproduction=("tictactoe_seed000_exp01",)),
        ReferenceNumber("000", "tictactoe", "tabular Q-learning, self-play from s0", "tabular", "4,000 episodes",
                        trace, None, "as_first", "trace", "same values, converged after about 3,500 episodes",
                        f"{src}, exp 02", value=3500, reproduction=("tictactoe_seed000_exp02",)),
        ReferenceNumber("000", "tictactoe", "tabular Q-learning, self-play", "tabular", "70,000 episodes",
                        "GreedyQ always X vs Random, 1,000 games", "random", "as_first", "wdl",
                        "\"almost perfect\" (figure only, no number)", f"{src}, exp 03",
                        reproduction=("tictactoe_seed000_exp03",)),
    ]
    for label, fig, v in (("win", "94% (56% before training)", 0.94), ("draw", "92% (50% before training)", 0.92),
                          ("loss", "90% (45% before training)", 0.90)):
        out.append(ReferenceNumber("000", "connect4", "approximate Q-learning (conv net) vs Random", "neural",
                                   "15,000 episodes", uci, "random", "as_first", "uci_win", fig,
                                   f"{src}, exp 04 ({label} positions)", value=v, uci_label=label,
                                   reproduction=_S000_UCI, reason=_S000_UCI_REASON))
    return out


_S001_REASON = ("the assignment does not say what its % measures, how many games or which seats, nor the table "
                "run's learning rate, discount or exploration (ours: alpha 0.1, and its network run's gamma 0.6 and "
                "epsilon 0.05); on 2x2 draws are possible, so W+D may be what it printed")
_S001_2X2 = ("dots_and_boxes_2x2_seed001_100", "dots_and_boxes_2x2_seed001_1k", "dots_and_boxes_2x2_seed001_10k")
_S001_3X3 = ("dots_and_boxes_3x3_seed001",)
#: Our reading of the homework: its 3x3 figures come from its Q-table, not its network.
_S001_3X3_READING = ("our reading of the homework: its 3x3 figures are its Q-table's (the 3x3 table seeded from the "
                     "2x2 one), not its network's: they stand in one table with the 2x2 figures of 100 / 1,000 / "
                     "10,000 training games, and the only network it describes has 40 outputs, a 4x4 board; so they "
                     "are compared with tables. Its network on 3x3 is dots_and_boxes_3x3_seed001_dqn_cmm, which no "
                     "published figure pairs with")
#: Reference system 001's own network, loop and optimiser (learn/seed001_dqn_cmm.py).
_S001_4X4 = ("dots_and_boxes_4x4_seed001_dqn_cmm",)
_S001_4X4_REASON = ("dots_and_boxes_4x4_seed001_dqn_cmm is the system's DQN_CMM as published (its network, TF1 "
                    "RMSProp at 1e-6, its conditional-minimax target from its own network, replay 20,000 learning "
                    "from 10,000, self-play against a frozen copy refreshed every 1,000 games, the paper's first "
                    "value; its code's HEAD: 25,000), on our planes instead of its walls tensor. The full profile "
                    "trains a small fraction of the system's 1,000,000 games (the row gives ours; the system's budget "
                    "would take about 15 days on one core), so the comparison is of a far shorter run; the default "
                    "profile does not define it")


def _s001() -> list[ReferenceNumber]:
    src = "SEEDS.md seed 001, Reported results"
    proto = "1,000 games, seats alternating (500 + 500); the system does not say what the % measures (read as wins)"
    agent = "Q-table (rewards: +1 per box, +5 win, −1 loss), self-play"
    out = []
    for game, budget, repro, figs in (
            ("dots_and_boxes_2x2", "100 / 1,000 / 10,000 games", _S001_2X2, ((0.9999, "99.99%"), (0.8023, "80.23%"),
                                                                              (0.7854, "78.54%"))),
            ("dots_and_boxes_3x3", "not stated", _S001_3X3, ((0.9845, "98.45%"), (0.2024, "20.24%"),
                                                             (0.0235, "2.35%")))):
        reason = _S001_REASON if game == "dots_and_boxes_2x2" else f"{_S001_REASON}; {_S001_3X3_READING}"
        for opp, (v, fig) in zip(("random", "moderate", "advanced"), figs):
            out.append(ReferenceNumber("001", game, agent, "tabular", budget, proto, opp, "combined", "win", fig, src,
                                       value=v, reproduction=repro, our_choice=True, reason=reason))
        for opp, fig, v in (("random", "win >= 95%", 0.95), ("moderate", "W+D >= 50%", 0.5),
                            ("advanced", "W+D >= 25%", 0.25)):
            metric: Metric = "win" if opp == "random" else "win_draw"
            out.append(ReferenceNumber("001", game, agent, "tabular", budget, "the system's pass thresholds", opp,
                                       "combined", metric, fig, f"{src}, its pass thresholds", value=v, threshold=True,
                                       reproduction=repro, our_choice=True))
    log = "mattdeak repo models/size4/logs.txt, log at game 1,000,000"
    for opp, fig, v in (("random", "100 / 0 / 0", 1.0), ("moderate", "25.4 / 15.9 / 58.7", 0.254),
                        ("advanced", "3.6 / 4.0 / 92.4", 0.036)):
        out.append(ReferenceNumber("001", "dots_and_boxes_4x4", "DQN_CMM, self-play vs frozen copy", "neural",
                                   "1,000,000 games", "1,000 games, seats alternating", opp, "combined", "wdl", fig,
                                   f"SEEDS.md seed 001, {log}", value=v, reproduction=_S001_4X4,
                                   reason=_S001_4X4_REASON))
    return out


_S002_DQ = ("tictactoe_seed002_dqn_vs_semirandom",)
#: Seed 002's other DQ regimes: defined in the full profile only (profiles/full.yaml; hours one game at a time).
_S002_DQ_R = ("tictactoe_seed002_dqn_vs_random",)
_S002_DQ_SELF = ("tictactoe_seed002_dqn_selfplay",)
_S002_DQ_MAXMIN = ("tictactoe_seed002_dqn_vs_maxmin",)
#: Its DQ trained against a second, independently learning DQ (learn/seed002_dq_pair.py).
_S002_DQ_PAIR = ("tictactoe_seed002_dqn_vs_second_dq",)
_S002_C4_DQ_SR, _S002_C4_DQ_SELF = ("connect4_seed002_dqn_vs_semirandom",), ("connect4_seed002_dqn_selfplay",)
#: Reproductions that only the full profile defines: another profile's report says so instead of "not run yet".
FULL_PROFILE_ONLY = frozenset(_S002_DQ_R + _S002_DQ_SELF + _S002_DQ_PAIR + _S002_DQ_MAXMIN + _S002_C4_DQ_SR
                              + _S002_C4_DQ_SELF + _S002_DQ + _S000_UCI[:1] + _S001_4X4)


def _s002() -> list[ReferenceNumber]:
    src = "SEEDS.md seed 002, Reported results"
    # agent, kind, budget, reproduction, opponent, W / D / L (converted from agent W / opponent W / tie), games
    qt_r, qt_q, qt_s = ("tictactoe_seed002_qt_vs_random",), ("tictactoe_seed002_qt_vs_qt",), \
        ("tictactoe_seed002_qt_snapshots",)
    ttt = [
        ("QT, trained vs Random", "tabular", "100,000 games", qt_r, "random", "95.20 / 4.80 / 0.00", "10,000"),
        ("QT, trained vs Random", "tabular", "100,000 games", qt_r, "maxmin", "0 / 100 / 0", "1,000"),
        ("QT, trained vs a second QT (README headline)", "tabular", "200,000 games", qt_q, "random",
         "93.17 / 6.63 / 0.20", "10,000"),
        ("QT, trained vs a second QT (README headline)", "tabular", "200,000 games", qt_q, "maxmin", "0 / 100 / 0",
         "1,000"),
        ("QT, self-play snapshots", "tabular", "200,000 games", qt_s, "random", "82.24 / 11.34 / 6.42", "10,000"),
        ("QT, self-play snapshots", "tabular", "200,000 games", qt_s, "maxmin", "0 / 61.60 / 38.40", "1,000"),
        ("DQ, trained vs Random", "neural", "150,000 games", _S002_DQ_R, "random", "94.04 / 5.08 / 0.88", "10,000"),
        ("DQ, trained vs Random", "neural", "150,000 games", _S002_DQ_R, "maxmin", "0 / 83.80 / 16.20", "1,000"),
        ("DQ, trained vs SemiRandom (README headline)", "neural", "150,000 games", _S002_DQ, "semirandom",
         "94.59 / 5.12 / 0.29", "10,000"),
        ("DQ, trained vs SemiRandom (README headline)", "neural", "150,000 games", _S002_DQ, "maxmin",
         "0 / 100 / 0", "1,000"),
        ("DQ, self-play", "neural", "200,000 games", _S002_DQ_SELF, "semirandom", "92.07 / 7.70 / 0.23", "10,000"),
        ("DQ, self-play", "neural", "200,000 games", _S002_DQ_SELF, "maxmin", "0 / 100 / 0", "1,000"),
        ("DQ, trained vs a second DQ", "neural", "200,000 games", _S002_DQ_PAIR, "semirandom", "92.43 / 7.42 / 0.15",
         "10,000"),
        ("DQ, trained vs a second DQ", "neural", "200,000 games", _S002_DQ_PAIR, "maxmin", "0 / 100 / 0", "1,000"),
        ("DQ, trained vs MaxMin", "neural", "10,000 games", _S002_DQ_MAXMIN, "semirandom", "38.74 / 29.07 / 32.19",
         "10,000"),
        ("DQ, trained vs MaxMin", "neural", "10,000 games", _S002_DQ_MAXMIN, "maxmin", "0 / 50 / 50", "1,000"),
    ]
    c4 = [
        ("DQ, trained vs SemiRandom", "neural", "200,000 games", _S002_C4_DQ_SR, "semirandom", "61.50 / 0 / 38.50",
         "10,000"),
        ("DQ, trained vs SemiRandom", "neural", "200,000 games", _S002_C4_DQ_SR, "maxmin", "0 / 0 / 100", "10"),
        ("DQ, self-play", "neural", "200,000 games", _S002_C4_DQ_SELF, "semirandom", "63.62 / 0 / 36.38",
         "10,000"),
        ("DQ, self-play", "neural", "200,000 games", _S002_C4_DQ_SELF, "maxmin", "0 / 0 / 100", "10"),
    ]
    out = []
    for game, rows in (("tictactoe", ttt), ("connect4", c4)):
        for agent, kind, budget, repro, opp, fig, n in rows:
            w, _, l = (float(x) / 100 for x in fig.split(" / "))
            # against MaxMin the system's agents never win: what tells them apart is how often they lose
            measure: Measure = "loss" if opp == "maxmin" else "win"
            proto = f"{n} games, agent first in the first half, second in the rest"
            out.append(ReferenceNumber("002", game, agent, kind, budget, proto, opp, "combined", "wdl", fig, src,
                                       value=l if measure == "loss" else w, measure=measure, reproduction=repro,
                                       reason=_S002_C4_TRAINING if game == "connect4" else
                                       _S002_DQ_BUDGET if repro == _S002_DQ else None))
    return out


#: How our best Connect 4 DQN trains differently from reference system 002's (params.yaml connect4_dqn; README
#: "League games"); the reproductions (full profile) train as the system did.
_S002_C4_TRAINING = ("our best, connect4_dqn, plays half its training games against tactical and alpha-beta of depth "
                     "2, 4 and 6 (league games), the other half self-play; the system trained against SemiRandom or "
                     "itself")
#: Where reference system 002's headline DQ run is trained.
_S002_DQ_BUDGET = ("the full profile trains the system's 150,000 games (the default profile does not define it: about "
                   "18,500 of them said little)")


def _s003() -> list[ReferenceNumber]:
    src = "SEEDS.md seed 003, Reported results (read from the repo's plots)"
    proto = "1,000 games per seat vs Random, greedy play; score = win + draw / 2"
    out = []
    epochs = "it updates after each epoch of games rather than after each game"
    for agent, kind, budget, first, second, values, repro, reason in (
            ("TD(lambda)", "neural", "200,000 games", "~0.99", "~0.75-0.80", (0.99, 0.775),
             ("tictactoe_seed003_td_lambda",), f"the default profile trains 20,000 of the 200,000 games; {epochs}"),
            ("DQN(lambda)", "neural", "200,000 games", "~0.97", "~0.60", (0.97, 0.60),
             ("tictactoe_seed003_dqn_lambda",), f"the default profile trains 20,000 of the 200,000 games; {epochs}; "
             "the system's targets used the first sample's successor for every sample, ours each its own"),
            ("Q-learning (network)", "neural", "40,000 games", "~0.72", "~0.53", (0.72, 0.53),
             ("tictactoe_seed003_qnet",), "the system's figure comes from its bug (every target but the first took "
             "the first sample's successor), fixed in ours; the default profile trains 5,000 of the 40,000 games"),
            ("Random player (baseline)", "baseline", "none", "0.65", "0.35", (0.65, 0.35),
             ("tournament:tictactoe_random_baseline",), None)):
        out.append(ReferenceNumber("003", "tictactoe", agent, kind, budget, proto, "random", "as_first", "score",
                                   first, src, value=values[0], reproduction=repro, reason=reason))
        out.append(ReferenceNumber("003", "tictactoe", agent, kind, budget, proto, "random", "as_second", "score",
                                   second, src, value=values[1], reproduction=repro, reason=reason))
    proto = "300 games per seat vs Minimax (uniform among optimal moves), 25 simulations, temperature 0"
    budget = "30 epochs x 2,000 games"
    repro = ("tictactoe_seed003_alphazero",)  # its ladder: {agent: perfect, games: 600}, 300 per seat
    why = ("the default profile trains 10 of the 30 epochs; the trained agent searches 8 leaves per network call "
           "where the system searched one at a time")
    out.append(ReferenceNumber("003", "tictactoe", "AlphaZero", "alphazero", budget, proto, "perfect", "as_first",
                               "score", "0.50 from epoch 0-1", src, value=0.5, reproduction=repro, reason=why))
    out.append(ReferenceNumber("003", "tictactoe", "AlphaZero", "alphazero", budget, proto, "perfect", "as_second",
                               "score", "0.38 → 0.50 by epoch 8", src, value=0.5, reproduction=repro, reason=why))
    return out


SYSTEM004_OPPONENTS = ("hybrid", "cells", "sols", "flip", "conniption_random")


def system004_experiment(rule: str, opponent: str) -> str:
    """Our experiment id of reference system 004's learner ``rule`` trained against ``opponent``: one table per
    seat, each played from its own seat, so the system's seat-first and seat-second tables are this experiment's
    two seats."""
    return f"conniption_seed004_{rule}_{opponent.removeprefix('conniption_')}"


_S004_REASON = ("one training run against a nearly deterministic player decides all 100 games at once, in "
                "the system's run and in ours; the system's test kept learning during its first game")


def _s004() -> list[ReferenceNumber]:
    src = "SEEDS.md seed 004, Learning agents (log_reinforce/q_results.csv)"
    proto = "100 games, fixed seats, from the empty board (agent W - L, no draws)"
    table = {
        ("qlearn", "QLearn", "1,727 games per table", "as_first"): ("17-83", "43-57", "0-100", "0-100", "36-64"),
        ("qlearn", "QLearn", "1,727 games per table", "as_second"): ("0-100", "7-93", "49-51", "0-100", "12-88"),
        ("minimaxq", "MinimaxQ", "1,382 games per table", "as_first"): ("0-100", "100-0", "100-0",
                                                                        "100-0 (headline)", "25-75"),
        ("minimaxq", "MinimaxQ", "1,382 games per table", "as_second"): ("0-100", "0-100", "100-0", "0-100",
                                                                         "14-86"),
    }
    out = []
    for (rule, agent, budget, seat), figs in table.items():
        for opp, fig in zip(SYSTEM004_OPPONENTS, figs):
            wins = int(fig.split("-")[0]) / 100
            out.append(ReferenceNumber("004", "conniption", f"{agent} (one table per opponent and seat)", "tabular",
                                       budget, proto, opp, seat, "win", fig, src, value=wins,
                                       reproduction=(system004_experiment(rule, opp),), reason=_S004_REASON))
    return out


#: Reference system 004's benchmark tournament (log/results_16_5evals.csv): (P1, P2) -> (P1 wins, P2 wins), no draws.
SYSTEM004_BENCHMARK: dict[tuple[str, str], tuple[int, int]] = {
    (a, b): wl for a, row in (
        ("hybrid", ((111, 0), (100, 0), (100, 0), (0, 100), (100, 0))),
        ("cells", ((121, 0), (100, 0), (100, 0), (0, 100), (92, 8))),
        ("sols", ((111, 0), (100, 0), (100, 0), (0, 100), (100, 0))),
        ("flip", ((109, 0), (100, 0), (100, 0), (100, 0), (100, 0))),
        ("conniption_random", ((12, 120), (27, 73), (6, 94), (9, 91), (60, 40))),
    ) for b, wl in zip(SYSTEM004_OPPONENTS, row)
}


REFERENCE_NUMBERS: tuple[ReferenceNumber, ...] = (*_s000(), *_s001(), *_s002(), *_s003(), *_s004())


@dataclass(frozen=True)
class System:
    """A reference system ("seed" in experiment ids, params.yaml and SEEDS.md) in a reader's words: what it was
    and what it measured."""

    id: str
    title: str
    what: str


#: The five earlier systems the project reproduces and must beat, as the report introduces them.
SYSTEMS: dict[str, System] = {s.id: s for s in (
    System("000", "tic-tac-toe and Connect 4, a course's final project",
           "The capstone report of an online machine-learning course (Udacity's Machine Learning Nanodegree; "
           "Robles, 2017, code davidrobles/mlnd-capstone-code): tabular Q-learning at tic-tac-toe, and a "
           "convolutional Q-network at Connect 4 trained and measured against random from the UCI data set's "
           "positions."),
    System("001", "Dots and Boxes, a course assignment",
           "A course's homework assignment (\"Homework 4\", 2017) on 2x2 and 3x3 boards, built on the code of "
           "mattdeak/dots-boxes-RL: a Q-table trained by self-play and measured against random, moderate and "
           "advanced players. The assignment prints its figures and pass marks without saying what they measure "
           "or over how many games; the repository's own logs are of 4x4 boards and a network."),
    System("002", "tic-tac-toe and Connect 4, roy-hachnochi/Reinforcement-Learning",
           "A public repository (2021): a tabular player (QT) and a deep Q-network (DQ), trained against Random, "
           "SemiRandom, MaxMin (a depth-4 heuristic search) or themselves."),
    System("003", "tic-tac-toe, 13rian/rl_tic_tac_toe",
           "A public repository (2019) of self-play learners: TD(0), TD(lambda), Q-learning and DQN(lambda) with "
           "small networks, and AlphaZero; scored against random and minimax, its figures read from its plots."),
    System("004", "Conniption (Connect 4 with board flips), a course's final project",
           "The capstone report of the same course (Suarez, 2017, code YeahHmm/Conniption): Q-learning and "
           "minimax-Q tables, one per opponent and seat, trained against its five benchmark players (four "
           "minimax heuristics and random), 100 games each with fixed seats."),
)}


@dataclass(frozen=True)
class Deviation:
    """A place where this project deliberately does something other than a reference system, and why."""

    system: str  # 000 to 004, or "all"
    where: str
    what: str


DEVIATIONS: tuple[Deviation, ...] = (
    Deviation("000", "learn/tabular_q.py",
              "Q values are stored from the view of the player to move (negamax) instead of player 0's view with "
              "max/min. It is the same update; written this way one greedy rule serves both seats, and games with "
              "extra turns (Dots and Boxes) keep the sign of the bootstrap when the same player moves again."),
    Deviation("000", "agents/learned.py",
              "Unseen Q entries start at N(0, 0.3) as in reference system 000, but each draw is a hash of (seed, "
              "state, action) rather than the next number in visit order: the same distribution, independent of the "
              "order and batching of games, and a saved agent values unseen states exactly as training would."),
    Deviation("000", "learn/tabular_q.py",
              "Training games run side by side (parallel_games, 256 by default) on the batched engine; updates "
              "are applied one at a time in a fixed order, so runs are reproducible and resumable bit for bit. "
              "parallel_games = 1 is reference system 000's one-game-at-a-time loop."),
    Deviation("000", "learn/dqn.py",
              "Reference system 000's Connect 4 network (exp 04) had no target network and learned from the state "
              "after the opponent's reply with a self-bootstrapped target. Ours is Double DQN with a target network, "
              "on the states it acts from, the opponent's reply folded into each transition. It discounts by 0.9 "
              "instead of the system's 0.99: against a random opponent a shorter horizon prefers the quicker win, "
              "leaving random fewer moves in which to stumble on a four. Each sampled transition is trained as "
              "itself or its mirror image."),
    Deviation("000", "learn/seed000_afterstate.py",
              "Reference system 000's exp 04 as published, with its two bugs fixed: its network was trained on the "
              "state after the opponent's reply with the target 0.99 V of that same state (no max over moves), but "
              "queried on afterstates; ours trains V on the afterstate it chose, towards the result at the end and "
              "else 0.99 times the best afterstate value of the next position. No target network, as in its code."),
    Deviation("001", "learn/tabular_q.py",
              "Reference system 001 rewarded only the result (+-1 through tanh). With reward: margin our tabular "
              "learner is paid the final score margin instead, so its values are the margins the Dots and Boxes "
              "referee computes and its greedy play keeps the best margin, not just the win."),
    Deviation("all", "evaluate/match.py",
              "Every agent is evaluated from both seats with 95% Wilson intervals (reference system 000 evaluated "
              "only as the first player, 004 used fixed seats, 001 and 002 reported only the pooled figure)."),
    Deviation("002", "games/",
              "A draw is worth 0 to both players; reference system 002 paid (0.2, 0.5) at tic-tac-toe and "
              "(0.3, 0.3) at Connect 4."),
    Deviation("002", "agents/alphabeta.py",
              "Reference system 002's MaxMin depth 4 is called maxmin, not \"perfect\": it is a 5-ply heuristic "
              "search. Our perfect player is backed by an exact referee."),
    Deviation("001", "learn/seed001_dqn_cmm.py",
              "Reference system 001's DQN_CMM is reproduced as published, its quirks kept (Q(s,a) inside its own "
              "target, the max over all outputs, drawn edges included, the MSE over all outputs), with four "
              "differences: the network reads our planes (edges, walls per box, both scores) instead of its walls "
              "tensor, so the model is our usual network agent; the frozen copy starts as a copy of the learner "
              "instead of a second random network; no transition joins one game's last decision to the next game's "
              "empty board, as its long-lived agent objects did; and the copy is refreshed every 1,000 games (its "
              "paper's first value) because its code's 25,000 exceeds every budget we can afford."),
    Deviation("001", "learn/dots_table.py",
              "Reference system 001 gives a learning rate, discount and exploration only for its network (1e-6, "
              "0.6, 0.05); its table run states none, so the Q-table's are our choice: alpha 0.1, and the network "
              "run's gamma 0.6 and epsilon 0.05. "
              "Its tables are keyed by the edge set alone, as the system's walls tensor is, so the +5 win bonus "
              "(which depends on the scores) is aliased across positions with different scores; we keep that, as the "
              "system did."),
    Deviation("001", "learn/dots_table.py",
              "Our best 3x3 table starts from a 2x2 table: each 3x3 entry is the mean of the 2x2 values of the "
              "sub-boards containing the edge (agents/dots_transfer.py). The system seeded 3x3 from 2x2 without "
              "saying how; the 2x2 source is trained in the same stage, so no stage depends on another's model."),
    Deviation("002", "learn/qt.py",
              "QT's saved agent keeps the system's random tie-break among equal Q values (kind qt_table); our other "
              "tabular agents break ties to the first move. Training plays one game at a time in the system's order."),
    Deviation("004", "learn/seed004_q.py",
              "Reference system 004's learners are trained and evaluated on our engine's draw rule (a four with the "
              "42nd piece wins); the system's in-simulator test kept learning during its first test game (epsilon ~ "
              "0.001, alpha 0.45); our evaluation uses the frozen table with the system's uniform tie-break."),
    Deviation("004", "games/conniption.py",
              "A four made by the 42nd piece wins for its player; reference system 004's code checked the full "
              "board first and scored it a draw."),
    Deviation("002", "learn/dqn.py",
              "The DQ trained against SemiRandom follows the system's loop (one game at a time, one update per game "
              "end, epsilon decaying in updates); the full profile alone trains it, with the system's budget, and its "
              "other regimes. Its run against a second learning "
              "DQ (full profile) is two of our DQN learners, each with its own network, replay and updates, "
              "driven game by game on one board (learn/seed002_dq_pair.py); the first one's model is judged."),
    Deviation("003", "learn/td0.py",
              "Reference system 003's TD(0) stops with an error at its first evaluation (it calls a network "
              "attribute that does not exist); ours plays and is judged like every agent."),
    Deviation("003", "learn/qnet.py",
              "Its Q-learning and DQN(lambda) targets take the first sample's successor for every sample of a batch "
              "or episode, so all but the first target are wrong; ours take each sample's own. Its Q-learning figure "
              "comes from that bug."),
    Deviation("003", "learn/value_selfplay.py",
              "Inputs are planes relative to the player to move instead of white/black planes with a side flag, "
              "and the Q networks give 9 values (the mover's moves) instead of 18 (both colours'): the same "
              "function, written once for both sides."),
    Deviation("003", "learn/value_selfplay.py",
              "TD(lambda) and DQN(lambda) update after each epoch of games played side by side, the network frozen "
              "while they are played, instead of once after each game inside the epoch."),
    Deviation("003", "params.yaml",
              "The default profile trains a tenth of the system's budgets (TD(lambda) and DQN(lambda) 20,000 of "
              "200,000 games, Q-learning 5,000 of 40,000, AlphaZero 10 of its 30 epochs); the full profile trains "
              "the system's."),
    Deviation("003", "learn/alphazero_params.py",
              "The trained AlphaZero agent's search walks 8 leaves per tree per network call (eval_leaves_per_wave, "
              "with a virtual loss) where the system's searched one leaf at a time; self-play keeps one walk per "
              "tree per call."),
)
