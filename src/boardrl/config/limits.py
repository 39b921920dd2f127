"""The ceilings of every count in params.yaml, and the strict number types of the schema."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, Strict

# ---------------------------------------------------------------------------------------------- limits
# Why upper limits: a budget is a promise of work and memory.  `games: 10**30` once passed validation, then the
# training loop's list of segment ends grew to 14 GB before the OOM killer ended it.  Every count in params.yaml
# has a ceiling well above what the `full` profile (profiles/full.yaml, the seeds' published budgets) asks for and
# below what fits in memory or ends in days on the 2 cores the project targets.

#: Training games or steps of one run, and any other count in those units (checkpoint_every, curve.first, decay):
#: 100 times the full profile's largest budget (10,000,000 games of dots_and_boxes_3x3_*).  The engines play about
#: a million games a second between the cheapest agents (docs/studies/speed.md) and learners far fewer, so 10^9
#: is hours to weeks of training: more is a slip of the keyboard, not a plan.
MAX_UNITS = 10**9
#: Checkpoints of one run (budget / checkpoint_every): the loop keeps one segment end per checkpoint and writes a
#: file at each; the full profile takes at most 25 (connect4_alphazero: 100,000 games every 4,096).
MAX_CHECKPOINTS = 10_000
#: Games per opponent, per curve point, per pairing or per UCI label: 50 times the largest configured (20,000
#: against random); a million games of the cheapest pairing take seconds, of a searching agent hours.
MAX_GAMES = 1_000_000
#: Positions the referee judges for the optimal-move rate: 50 times the configured 2,000, which take Connect 4's
#: referee 21-45 s on 2 busy cores (params.yaml), so at most about half an hour.
MAX_POSITIONS = 100_000
#: The UCI Connect-4 data set's positions: no label has more to sample.
UCI_POSITIONS = 67_557
#: Plies of random play before an optimal-move position: longer than any game here is meaningless.
MAX_PLIES = 1_000
#: Training seeds of one experiment or sweep (each is a whole run; the full profile trains at most 5).
MAX_SEEDS = 100
#: Optuna trials of one sweep (the shipped sweep runs 12; each trial trains every seed).
MAX_TRIALS = 10_000
#: Agents of one tournament: every ordered pair plays, so 32 agents are 1,024 pairings.
MAX_TOURNAMENT_AGENTS = 32

#: Learner params (experiments.<id>.params, nested ones included) with a ceiling of their own, by key: (limit,
#: why).  Every other whole number there is at most MAX_UNITS.  The learner models (learn/*.py) check the lower
#: bounds and types; these ceilings belong to params.yaml, which can ask for any size.
LEARNER_LIMITS: dict[str, tuple[int, str]] = {
    **dict.fromkeys(("simulations", "eval_simulations"), (10_000, "a search tree per game of a batch, up to ~1 KB "
                                                          "a simulation (25 times the largest configured: 400)")),
    **dict.fromkeys(("leaves_per_wave", "eval_leaves_per_wave"), (64, "each wave's paths are preallocated per "
                                                                  "simulation")),
    "eval_rollouts": (256, "playouts per evaluated leaf"),
    **dict.fromkeys(("parallel_games", "parallel_envs"), (65_536, "games held side by side in memory")),
    **dict.fromkeys(("buffer_size", "buffer", "window"), (2_000_000, "replay memory preallocated at up to ~0.7 KB a "
                                                      "transition; 10 times the largest configured (200,000)")),
    **dict.fromkeys(("batch_size", "batch"), (65_536, "one minibatch in memory")),
    **dict.fromkeys(("updates", "updates_per_epoch", "gradient_steps"), (100_000, "minibatches per learning phase")),
    **dict.fromkeys(("hidden", "head_hidden"), (4_096, "units of a layer: 4,096 x 4,096 weights are 64 MB")),
    "threads": (256, "torch threads"),
    "temperature_plies": (MAX_PLIES, "longer than any game here"),
}
#: Search nodes held at once by self-play (simulations x parallel_games trees): about 3 GB at ~300 bytes a node.
MAX_SEARCH_NODES = 10_000_000
#: Layers of a network's hidden list.
MAX_LAYERS = 16

#: A whole number that must be one: pydantic's lax mode would read ``true`` as 1 and "1000" as 1000.
Whole = Annotated[int, Strict()]
#: A number (a whole number is one too), never a boolean.
Number = Annotated[float, Strict()]
#: true or false, never 1 or "yes" in quotes.
Flag = Annotated[bool, Strict()]
#: Plies of a game.
PlyCount = Annotated[int, Strict(), Field(ge=0, le=MAX_PLIES)]
