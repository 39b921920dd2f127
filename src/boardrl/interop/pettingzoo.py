"""PettingZoo AEC environments for every boardrl game, so users can bring their own agents and libraries.

Why an AEC (agent-environment-cycle) environment: every boardrl game is turn based, and Dots and Boxes (extra
turn after completing a box) and Conniption (three stage-moves per turn) let the *same* player move several
times in a row.  AEC steps one agent at a time and names the next one in ``agent_selection``, which is exactly
``game.to_move(state)``; a parallel (simultaneous-move) API would have to invent no-op moves instead.

Usage (``pip install 'boardrl[interop]'``)::

    from boardrl.interop.pettingzoo import env

    e = env("connect4")                  # or tictactoe, dots_and_boxes_3x3, conniption, ...
    e.reset(seed=0)
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, info = e.last()
        action = None if terminated or truncated else e.action_space(agent).sample(obs["action_mask"])
        e.step(action)

The API follows PettingZoo's classic board games (``pettingzoo.classic``):

* Agents ``"player_0"`` (boardrl player 0, moves first) and ``"player_1"``; ``possible_agents`` lists both.
* ``action_space(agent)`` is ``Discrete(game.num_actions)``: the game's fixed action space (boardrl action
  numbers; ``game.format_move`` names them).
* ``observation_space(agent)`` is ``Dict(observation=Box(0, 1, game.encoding_shape, float32),
  action_mask=Box(0, 1, (num_actions,), int8))``.  All boardrl encodings lie in [0, 1] (scores and counts are
  stored as fractions), so the bounds are exact, not a guess.
* ``action_mask`` is ``game.legal_moves(state)`` as int8 for the agent to move and all zeros for the other
  agent (as in the classic envs), and all zeros once the game is over.
* Rewards are 0 until the game ends; on the final step every agent receives ``game.returns(final_state)``
  (+1 win, 0 draw, -1 loss) and every agent is terminated (never truncated: every game here ends by rule).
  ``last()`` reports each agent's reward accumulated since it last acted, as PettingZoo requires.
* ``render_mode``: ``"ansi"`` makes ``render()`` return ``game.render(state)``; ``"human"`` prints it (also
  after every step).  ``close()`` releases nothing (there is no window) but exists as the API asks.
* ``reset(seed=None, options=None)``: the games have no chance element, so ``seed`` and ``options`` are
  accepted for API compatibility and change nothing: every reset starts from ``game.initial_state()`` and the
  same actions always give the same episode.
* ``infos`` are empty dicts.  For users who want the exact rules state, ``game`` (the boardrl ``Game``) and
  ``game_state`` (its current state) are attributes; they are readable through the wrappers too.

Observation perspective (the choice, exactly): PettingZoo's classic envs observe from the *observing* agent's
side ("my pieces, their pieces"); boardrl's ``game.encode(state)`` is from the side of the player *to move*.
``observe(agent)`` therefore returns ``game.encode(state)`` unchanged when ``agent`` is to move (always the
case for the ``agent_selection`` of a running game, hence for ``last()``), and otherwise the same planes with
every own/opponent pair exchanged (``observer_planes``): tic-tac-toe and Connect 4 swap their two stone
planes; Dots and Boxes swaps its own-score and opponent-score planes (edge and box planes are shared);
Conniption swaps own/opponent pieces and own/opponent flips left (stage and last-flip planes are shared: they
describe the turn in progress, whoever's it is).  So plane 0 is always the observing agent's own material,
and a network trained on boardrl encodings sees exactly what it was trained on when it is to move.

Illegal actions (the choice): ``raw_env.step`` raises ``boardrl.games.IllegalMoveError`` (a ``ValueError``
naming the legal moves) and leaves the environment unchanged, so a bug in an agent is loud.  ``env()`` adds
the wrappers the classic envs use: ``TerminateIllegalWrapper(illegal_reward=-1)`` (an illegal action ends the
game: -1 for the offender, 0 for the other agent, all agents terminated and truncated, with a PettingZoo
warning), ``AssertOutOfBoundsWrapper`` (an action outside ``Discrete(num_actions)`` fails an assertion) and
``OrderEnforcingWrapper`` (e.g. ``step`` before ``reset`` is an error).  Use ``raw_env`` for the strict
behaviour.
"""

from __future__ import annotations

from typing import Any

import numpy as np

try:
    import gymnasium
    from gymnasium import spaces
    from gymnasium.utils import EzPickle
    from pettingzoo import AECEnv
    from pettingzoo.utils import wrappers
except ImportError as exc:  # pragma: no cover - exercised only without the optional extra
    raise ImportError(
        "boardrl.interop.pettingzoo needs the optional 'interop' extra: pip install 'boardrl[interop]' "
        f"(pettingzoo>=1.25, gymnasium>=1.0); missing: {exc.name}"
    ) from exc

from boardrl.errors import BoardRLError
from boardrl.games import Game, make_game

__all__ = ["AGENTS", "env", "observer_planes", "raw_env"]

#: Agent names, indexed by boardrl player number (0 moves first).
AGENTS: tuple[str, str] = ("player_0", "player_1")

Observation = dict[str, np.ndarray]


def observer_planes(game: Game) -> tuple[int, ...]:
    """The plane order that turns ``game.encode(state)`` (mover's view) into the other player's view.

    Why here and not in the games: the games only ever need the mover's view (search and training are from
    the side to move); only the PettingZoo convention asks for the observer's.  The tables below follow each
    game's documented encoding; tests check them against states whose player to move is exchanged.
    ``BoardRLError`` for a game without a known table (a new Game subclass must add one).
    """
    from boardrl.games.connect4 import Connect4
    from boardrl.games.conniption import Conniption
    from boardrl.games.dots_and_boxes import DotsAndBoxes
    from boardrl.games.tictactoe import TicTacToe

    if isinstance(game, (TicTacToe, Connect4)):
        return (1, 0)  # own stones, opponent stones
    if isinstance(game, DotsAndBoxes):
        return (0, 1, 2, 4, 3)  # drawn, undrawn, box walls / 4 (shared); own score, opponent score
    if isinstance(game, Conniption):
        # own, opponent pieces; stage one-hot x3 (shared); own, opponent flips left; last move was a flip (shared)
        return (1, 0, 2, 3, 4, 6, 5, 7)
    raise BoardRLError(
        f"no observer-perspective table for {type(game).__name__} ({game.game_id}); "
        "add one to boardrl.interop.pettingzoo.observer_planes"
    )


class raw_env(AECEnv[str, Observation, int], EzPickle):  # noqa: N801 - PettingZoo's naming convention
    """One boardrl game as an unwrapped PettingZoo AEC environment (see the module docstring for the API).

    ``game_id`` is a boardrl game id (``boardrl.games.GAME_IDS`` or ``dots_and_boxes_RxC``) or a ``Game``
    instance (e.g. ``Conniption(seed_draw_rule=True)``).  Illegal actions raise ``IllegalMoveError``; use
    ``env()`` for the classic envs' wrappers.
    """

    def __init__(self, game_id: str | Game = "tictactoe", render_mode: str | None = None) -> None:
        EzPickle.__init__(self, game_id, render_mode)
        super().__init__()
        game = game_id if isinstance(game_id, Game) else make_game(game_id)
        self.metadata: dict[str, Any] = {
            "render_modes": ["ansi", "human"],
            "name": f"boardrl_{game.game_id}_v0",
            "is_parallelizable": False,
        }
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise BoardRLError(f"render_mode must be None, 'ansi' or 'human', got {render_mode!r}")
        self.render_mode = render_mode
        self.game = game
        self._swap = np.asarray(observer_planes(game), dtype=np.intp)
        self.possible_agents: list[str] = list(AGENTS)
        self.agents: list[str] = list(AGENTS)
        # One space object per agent, returned as is: PettingZoo requires the same object on every call so that
        # seeding a space sticks.
        self.action_spaces = {a: spaces.Discrete(game.num_actions) for a in AGENTS}
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(0.0, 1.0, shape=tuple(game.encoding_shape), dtype=np.float32),
                    "action_mask": spaces.Box(0, 1, shape=(game.num_actions,), dtype=np.int8),
                }
            )
            for a in AGENTS
        }
        self.game_state: Any = game.initial_state()
        self._init_bookkeeping()

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ episode
    def _init_bookkeeping(self) -> None:
        self.agents = list(self.possible_agents)
        self.rewards: dict[str, float] = {a: 0.0 for a in self.agents}
        self._cumulative_rewards: dict[str, float] = {a: 0.0 for a in self.agents}
        self.terminations: dict[str, bool] = {a: False for a in self.agents}
        self.truncations: dict[str, bool] = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._skip_agent_selection = None
        self.agent_selection: str = AGENTS[self.game.to_move(self.game_state)]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game from ``game.initial_state()``; ``seed``/``options`` change nothing (no chance)."""
        self.game_state = self.game.initial_state()
        self._init_bookkeeping()

    def step(self, action: int | np.integer | None) -> None:
        """Play ``action`` for ``agent_selection``; the next agent is ``game.to_move`` of the new state.

        A terminated agent must step ``None`` (PettingZoo's dead step, which removes it from ``agents``).  An
        illegal action raises ``IllegalMoveError`` before anything changes.
        """
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if isinstance(action, np.ndarray) and action.shape in ((), (1,)):
            action = action.reshape(()).item()
        self.game_state = self.game.play(self.game_state, action)  # IllegalMoveError: nothing changed yet
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        if self.game.is_over(self.game_state):
            for a, r in zip(AGENTS, self.game.returns(self.game_state)):
                self.rewards[a] = float(r)
            self.terminations = {a: True for a in self.agents}
        self.agent_selection = AGENTS[self.game.to_move(self.game_state)]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    # ------------------------------------------------------------------ observations
    def observe(self, agent: str) -> Observation:
        """``{"observation", "action_mask"}`` from ``agent``'s side (module docstring: own planes first)."""
        player = AGENTS.index(agent)
        planes = self.game.encode(self.game_state)
        to_move = self.game.to_move(self.game_state)
        if player != to_move:
            planes = planes[self._swap]
        mask = np.zeros(self.game.num_actions, dtype=np.int8)
        if player == to_move:
            mask[:] = self.game.legal_moves(self.game_state)
        return {"observation": np.ascontiguousarray(planes, dtype=np.float32), "action_mask": mask}

    # ------------------------------------------------------------------ rendering
    def render(self) -> str | None:
        """``game.render(state)``: returned for ``"ansi"``, printed for ``"human"``; a warning without a mode."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'")
            return None
        text = self.game.render(self.game_state)
        if self.render_mode == "human":
            print(text + "\n")
            return None
        return text

    def close(self) -> None:
        """Nothing to release (no window); defined because PettingZoo expects ``close`` beside ``render``."""


def env(game_id: str | Game = "tictactoe", render_mode: str | None = None) -> AECEnv:
    """``raw_env`` wrapped as PettingZoo's classic envs are: illegal moves lose, bounds and call order checked."""
    e: AECEnv = raw_env(game_id, render_mode=render_mode)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e
