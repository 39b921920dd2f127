"""The ``boardrl`` command: solve positions, count positions, run matches, play an agent in the terminal.

The JSON printed with ``--json`` is a stable interface (other tools and the pipeline read it).  Bad input
(an unknown game or agent, a malformed or illegal move string, a negative number) prints one line
``error: ...`` on stderr and exits with status 2, never a traceback: the custom group below runs the
command in click's non-standalone mode and turns library and usage errors into that line.  A bare ``boardrl``
(or ``boardrl book``) prints its help instead, and ``boardrl --version`` the version.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any, Sequence

import numpy as np
import typer
from typer._click.exceptions import NoArgsIsHelpError
from typer.core import TyperGroup

from boardrl.games import make_game
from boardrl.errors import BoardRLError
from boardrl.games.base import Game

EXIT_BAD_INPUT = 2


EXIT_INTERRUPTED = 130


def _fail(message: str, code: int = EXIT_BAD_INPUT) -> None:
    first = " ".join(str(message).strip().splitlines()) or "bad input"
    typer.echo(f"error: {first}", err=True)
    sys.exit(code)


class _OneLineErrors(TyperGroup):
    """A typer group whose bad-input errors are one ``error: ...`` line and exit status 2."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True, **extra: Any) -> Any:
        try:
            rv = super().main(args=args, prog_name=prog_name, complete_var=complete_var, standalone_mode=False,
                              **extra)
        except NoArgsIsHelpError as exc:  # no command given: the help a person needs, not an error
            typer.echo(exc.format_message())
            rv = 0
        except BoardRLError as exc:
            _fail(str(exc))
        except typer.TyperException as exc:  # click usage errors: unknown option, missing argument, bad int
            _fail(exc.format_message())
        except typer.Abort:
            _fail("aborted", 1)
        except (KeyboardInterrupt, EOFError):
            _fail("interrupted", 130)
        if rv == EXIT_INTERRUPTED:  # typer turns Ctrl-C into Exit(130) and click returns its code
            _fail("interrupted", EXIT_INTERRUPTED)
        if standalone_mode:
            sys.exit(rv if isinstance(rv, int) else 0)
        return rv


app = typer.Typer(
    cls=_OneLineErrors,
    help="boardrl: board games, exact referees, agents and matches.",
    add_completion=False,
    pretty_exceptions_enable=False,
    no_args_is_help=True,
)


def _version(value: bool) -> None:
    if value:
        from boardrl import __version__

        typer.echo(f"boardrl {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """boardrl: board games, exact referees, agents and matches."""

GameArg = Annotated[str, typer.Argument(help="tictactoe, connect4, dots_and_boxes_RxC or conniption", show_default=False)]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def _emit(data: dict, as_json: bool, text: str) -> None:
    typer.echo(json.dumps(data, indent=2) if as_json else text)


def _agent(game: Game, spec: str):
    """The agent ``spec`` names; a registered model's alias (``model:connect4@champion``) is fetched first."""
    from boardrl.tracking.registry import make_named_agent

    return make_named_agent(game, spec)


# ---------------------------------------------------------------------------------------------- solve
#: Below this many stones a Connect 4 solve is slow enough to warn about (benchmarks/connect4_positions.py).
EARLY_CONNECT4_PLIES = 8


def _connect4_book_covers(plies: int) -> bool:
    """True when the installed opening book holds the children of a position with ``plies`` stones."""
    from boardrl.solvers.connect4_book import default_book

    book = default_book()
    return book is not None and plies < book.plies


@app.command()
def solve(
    game_id: GameArg,
    moves: Annotated[str, typer.Argument(help='Moves from the start in the game\'s notation ("" = the start).')] = "",
    as_json: JsonOpt = False,
) -> None:
    """Exact value and optimal moves of the position reached by MOVES, for the side to move."""
    game = make_game(game_id)
    state = game.replay(moves)
    from boardrl.solvers.registry import make_referee

    if game.game_id == "connect4" and state.plies < EARLY_CONNECT4_PLIES and not game.is_over(state) \
            and not _connect4_book_covers(state.plies):
        typer.echo(f"note: solving a Connect 4 position with {state.plies} stones can take minutes "
                   "(the empty board takes about 3.5 minutes here; 8-stone positions about a second; "
                   "`boardrl book build` makes them lookups)", err=True)
    verdict = make_referee(game).solve(state)
    data = verdict.to_json(game)
    _emit(data, as_json, _describe_verdict(game, state, data))


def _describe_verdict(game: Game, state: Any, data: dict) -> str:
    lines = [game.render(state)]
    if game.is_over(state):
        lines.append("game over")
    side = f"player {game.to_move(state)} ({'first' if game.to_move(state) == 0 else 'second'} player)"
    outcome = {1: "win", 0: "draw", -1: "loss"}[data["value"]]
    lines.append(f"to move: {side}; value for the side to move: {outcome}")
    if "score" in data:
        lines.append(f"score: {data['score']}")
    if "margin" in data:
        lines.append(f"margin (mover minus opponent, perfect play): {data['margin']:+d}")
    if data["optimal_moves"]:
        lines.append("optimal moves: " + " ".join(data["optimal_moves"]))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- count
@app.command()
def count(
    game_id: GameArg,
    plies: Annotated[int, typer.Option("--plies", min=0, help="Count up to this many plies.")] = 4,
    as_json: JsonOpt = False,
) -> None:
    """Distinct positions after exactly k plies, k = 0..N."""
    game = make_game(game_id)
    from boardrl.games.count import count_positions

    counts = [int(c) for c in count_positions(game, plies)]
    _emit({"counts": counts}, as_json, "\n".join(f"{k:3d} {c:>14,d}" for k, c in enumerate(counts)))


@app.command()
def results(
    pattern: Annotated[str, typer.Argument(help="Only experiment ids containing this text.")] = "",
    root: Annotated[Path, typer.Option("--root", help="The project (where results/metrics is).")] = Path("."),
    width: Annotated[int, typer.Option("--width", min=60, help="Columns the table may use.")] = 120,
    as_json: JsonOpt = False,
) -> None:
    """Every experiment's headline metrics, one line each: budget, seeds, optimal moves, W/L per opponent."""
    from boardrl.report.compare import load_metrics, render

    table = load_metrics(root, pattern)
    _emit(table, as_json, render(table, width))


# ---------------------------------------------------------------------------------------------- book
book_app = typer.Typer(help="The Connect 4 opening book (exact scores of every position with at most D stones).",
                       no_args_is_help=True)
app.add_typer(book_app, name="book")


def _root_columns(root: str) -> list[int]:
    if any(ch not in "1234567" for ch in root):
        raise BoardRLError(f"book: --root {root!r} must be Connect 4 moves, columns 1-7 (e.g. 4453)")
    return [int(ch) - 1 for ch in root]


@book_app.command("build")
def book_build(
    plies: Annotated[int, typer.Option("--plies", min=0, help="Every position with at most this many stones.")] = 8,
    processes: Annotated[int, typer.Option("--processes", min=1, help="Worker processes for the search.")] = 2,
    out: Annotated[Path | None, typer.Option("--out", help="Book file (default: the packaged one).")] = None,
    work_dir: Annotated[Path | None, typer.Option("--work-dir", help="Chunks of an unfinished build.")] = None,
    root: Annotated[str, typer.Option("--root", help="Only positions after these moves (e.g. 4453).")] = "",
    as_json: JsonOpt = False,
) -> None:
    """Build the opening book by search and negamax; a killed build resumes where it stopped."""
    from boardrl.solvers.connect4_book_build import build_book

    meta = build_book(plies, out, processes, work_dir, _root_columns(root), log=lambda m: typer.echo(m, err=True))
    _emit(meta, as_json, f"{meta['count']:,} positions, {meta['bytes']:,} bytes, {meta['build_seconds']} s, "
                         f"sha256 {meta['sha256']}")


@book_app.command("verify")
def book_verify(
    path: Annotated[Path | None, typer.Option("--path", help="Book file (default: the packaged one).")] = None,
    sample: Annotated[int, typer.Option("--sample", min=0, help="Entries re-solved by a fresh search.")] = 30,
    min_plies: Annotated[int | None, typer.Option("--min-plies", min=0,
                                                  help="Sample entries with at least this many stones "
                                                       "(default: the book's D - 1).")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Sampling seed.")] = 0,
    as_json: JsonOpt = False,
) -> None:
    """Check the book's checksum and re-solve a random sample of its entries by a fresh search."""
    from boardrl.solvers.connect4_book_build import verify_book

    data = verify_book(path, sample, seed, min_plies)
    _emit(data, as_json, f"{data['path']}: checksum ok; {data['checked']} of {data['count']:,} entries agree "
                         f"with a fresh search ({data['seconds']} s)")


# ---------------------------------------------------------------------------------------------- match
@app.command()
def match(
    game_id: GameArg,
    agent_a: Annotated[str, typer.Argument(help='Agent spec, e.g. "random" or "mcts:simulations=200".')],
    agent_b: Annotated[str, typer.Argument(help="The opponent's agent spec.")],
    games: Annotated[int, typer.Option("--games", help="Number of games.")] = 100,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the whole match.")] = 0,
    seats: Annotated[str, typer.Option("--seats", help="alternate, a_first or b_first.")] = "alternate",
    processes: Annotated[int, typer.Option("--processes", help="Worker processes (scalar agents).")] = 1,
    batch_size: Annotated[int, typer.Option("--batch-size", help="Games per batch (batched agents).")] = 4096,
    starts: Annotated[Path | None, typer.Option(
        "--starts", help="File of start positions: one move string per line (# comments allowed).")] = None,
    start_order: Annotated[str, typer.Option("--start-order", help="cycle or random.")] = "cycle",
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show a progress bar.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Play GAMES games of AGENT_A against AGENT_B; W/D/L from AGENT_A's side, per seat."""
    from boardrl.evaluate.match import play_match

    game = make_game(game_id)
    a, b = _agent(game, agent_a), _agent(game, agent_b)
    if games < 1:
        raise BoardRLError(f"--games must be a positive integer, got {games}")
    start_states = _read_starts(game, starts) if starts is not None else None
    _pin_play_threads(a, b)
    result = play_match(game, a, b, games, seats=seats, starts=start_states, start_order=start_order, seed=seed,
                        processes=processes, batch_size=batch_size, progress=progress)
    _emit(result.to_dict(), as_json, str(result))


def _play_threads(agent: Any) -> int | None:
    """torch's threads for playing a saved model as its experiment's stages play it (``learn.stage_threads`` of the
    learner and params its ``agent.json`` recorded), or None: an agent without torch or without that record."""
    meta = getattr(agent, "meta", None) or {}
    name = meta.get("learner")
    if "torch" not in sys.modules or not isinstance(name, str):
        return None
    from pydantic import ValidationError

    from boardrl.learn import learner_names, learner_params_model, stage_threads

    if name not in learner_names():
        return None
    try:
        params = learner_params_model(name).model_validate(meta.get("params") or {})
    except ValidationError:
        return None
    return stage_threads(name, params)


def _pin_play_threads(*agents: Any) -> int | None:
    """Pin torch's threads before a match of network agents: the first model's count, which its evaluate stage
    plays with, in this process and (``play_match`` hands it on) in every worker.

    Why: the count changes a network's arithmetic (``learn/core/device.py``), so torch's default of every core
    would make ``boardrl match`` differ from the pipeline's ladder and from machine to machine, and with
    ``--processes N`` each worker would spin up every core (N times oversubscribed)."""
    counts = [n for n in map(_play_threads, agents) if n is not None]
    if not counts:
        return None
    from boardrl.learn.core.device import torch_threads

    return torch_threads(counts[0])


def _read_starts(game: Game, path: Path) -> list[Any]:
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise BoardRLError(f"cannot read --starts file {str(path)!r}: {exc.strerror}") from None
    states = []
    for no, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            states.append(game.replay(text))
        except BoardRLError as exc:
            raise BoardRLError(f"{path}:{no}: {exc}") from None
    if not states:
        raise BoardRLError(f"--starts file {str(path)!r} holds no positions")
    return states


# ---------------------------------------------------------------------------------------------- play
@app.command()
def play(
    game_id: GameArg,
    agent: Annotated[str, typer.Argument(help="The opponent's agent spec.")] = "random",
    first: Annotated[bool, typer.Option("--first/--second", help="Move first (default) or second.")] = True,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the agent's randomness.")] = 0,
) -> None:
    """Play AGENT yourself in the terminal (type help, undo or quit at the prompt; Ctrl-D ends too)."""
    from boardrl.agents.human import HumanAgent, InputEnded, Quit, seat_text

    game = make_game(game_id)
    human, bot = HumanAgent(game, undo=True), _agent(game, agent)
    you = 0 if first else 1
    typer.echo(f"{game.game_id}: you play {seat_text(game, you)}; {bot.name} plays {seat_text(game, 1 - you)}. "
               "Type help for the moves and commands.")
    try:
        state = _play_turns(game, human, bot, you, np.random.default_rng(seed))
    except Quit:
        typer.echo("you quit; the game is left unfinished")
        return
    except InputEnded:  # Ctrl-D: the prompt is still on its line
        typer.echo("\ninput ended; the game is left unfinished")
        return
    typer.echo(game.render(state))
    winner = game.winner(state)
    margin = game.score_margin(state)
    score = "" if margin is None else f" (score margin {margin if you == 0 else -margin:+d} for you)"
    typer.echo(("draw" if winner is None else "you win" if winner == you else f"{bot.name} wins") + score)


def _play_turns(game: Game, human: Any, bot: Any, you: int, rng: np.random.Generator) -> Any:
    """The game to its end; ``undo`` at the prompt goes back to your last move that was not forced."""
    from boardrl.agents.human import Undo

    history = [game.initial_state()]  # every position so far
    while not game.is_over(history[-1]):
        state = history[-1]
        if game.to_move(state) != you:
            move = bot.act(state, rng)
            typer.echo(f"{bot.name} plays {game.format_move(move)}")
        else:
            try:
                move = human.act(state, rng)  # shows the board and re-asks until the move is legal
            except Undo:
                back = _undo_point(game, history, you)
                if back is None:
                    typer.echo("nothing to undo: you have not moved yet")
                else:
                    n = len(history) - 1 - back
                    typer.echo(f"took back {n} move{'s' * (n != 1)}")
                    del history[back + 1:]
                continue
        history.append(game.play(state, move))
    return history[-1]


def _undo_point(game: Game, history: list[Any], you: int) -> int | None:
    """Index of the position before your last chosen move (one with a choice: a forced move would only be
    played again), or None when there is none."""
    for i in range(len(history) - 2, -1, -1):
        s = history[i]
        if game.to_move(s) == you and len(game.legal_actions(s)) > 1:
            return i
    return None


# ---------------------------------------------------------------------------------------------- serve
@app.command()
def serve(
    host: Annotated[str, typer.Option("--host", help="Address to bind; other than 127.0.0.1, anyone who can "
                                      "reach it can use the server.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")] = 8000,
    allow_model_path: Annotated[list[Path] | None, typer.Option(
        "--allow-model-path", help="A directory outside the project whose models (model:<directory>) the server "
        "may load; repeat for more.  By default only the project's models load.", show_default=False,
        metavar="DIR")] = None,
    max_wait: Annotated[float, typer.Option("--max-wait", min=1, max=600, help="Longest referee wait (s) a "
                                            "request may ask for (the page asks with 1 s).")] = 30.0,
    max_waiters: Annotated[int, typer.Option("--max-waiters", min=1, max=10_000, help="Requests that may wait "
                                             "for the referee at once; more are answered 503.")] = 100,
    agent_timeout: Annotated[float, typer.Option("--agent-timeout", min=0.1, max=3600, help="Longest an "
                                                 "opponent may think about a move (s); then it is stopped "
                                                 "(503).")] = 60.0,
) -> None:
    """Play any agent in the browser, with the referee's exact values (http://HOST:PORT)."""
    from boardrl.web import serve as serve_app

    if host not in ("127.0.0.1", "localhost", "::1"):
        typer.echo(f"warning: binding {host}: the server answers anyone who can reach this address "
                   "(there is no login); the default 127.0.0.1 serves this machine only", err=True)
    for folder in allow_model_path or []:
        if not folder.is_dir():
            _fail(f"--allow-model-path {folder}: not a directory")
    shown = f"[{host}]" if ":" in host else host
    typer.echo(f"boardrl: play on http://{shown}:{port}/ (Ctrl-C stops the server)", err=True)
    serve_app(host=host, port=port, model_paths=list(allow_model_path or []), max_wait_s=max_wait,
              max_waiters=max_waiters, agent_timeout_s=agent_timeout)


def main() -> None:
    """Entry point for ``python -m boardrl.cli``."""
    app()


# ---------------------------------------------------------------------------------------------- sweep
SWEEP_DIR = Path("sweeps")


@app.command()
def sweep(
    experiment_id: Annotated[str | None, typer.Argument(help="Experiment of params.yaml whose learner params to tune.",
                                                        show_default=False)] = None,
    trials: Annotated[int, typer.Option("--trials", help="Finished trials the study should have (it continues).")] = 20,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Stop starting trials after S seconds.")] = None,
    storage: Annotated[str | None, typer.Option("--storage", help="Study storage: a journal file (default "
                                                "sweeps/<study>.journal) or a SQLAlchemy URL, e.g. "
                                                "postgresql+psycopg://user@host:5432/db.")] = None,
    study: Annotated[str | None, typer.Option("--study", help="Study name (default: the experiment id).")] = None,
    jobs: Annotated[int, typer.Option("--jobs", help="Worker processes on this machine.")] = 1,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the TPE sampler (worker i uses seed + i).")] = 0,
    seeds: Annotated[int, typer.Option("--seeds", help="Training seeds 0..K-1 averaged per trial.")] = 1,
    budget: Annotated[int | None, typer.Option("--budget", help="Training budget per trial and seed "
                                               "(default: the experiment's).")] = None,
    tracking_uri: Annotated[str | None, typer.Option("--tracking-uri", help="MLflow tracking URI (default: the "
                                                     "project's mlflow.db), e.g. http://host:5000.")] = None,
    params_file: Annotated[Path, typer.Option("--params", help="The params file.")] = Path("params.yaml"),
    apply: Annotated[str | None, typer.Option("--apply", help="Print the dvc exp run command that trains the "
                                              "experiment with study STUDY's best params.")] = None,
    run_it: Annotated[bool, typer.Option("--run", help="With --apply: run that command.")] = False,
    prune: Annotated[bool, typer.Option("--prune/--no-prune", help="Stop bad trials early (median rule).")] = True,
    create_only: Annotated[bool, typer.Option("--create-only", help="Create the study and its MLflow parent run, "
                                              "then stop: do this once before starting workers on many "
                                              "machines against one database.")] = False,
) -> None:
    """Tune an experiment's learner params with Optuna (MLflow: a parent run per study, a run per trial)."""
    from boardrl.config import load_params

    if apply is not None:
        _apply_best(apply, storage, run_it)
        return
    if experiment_id is None:
        raise BoardRLError("name an experiment of params.yaml to sweep, or --apply STUDY")
    from boardrl.sweeps.run import resolve_settings, run_sweep

    if seeds < 1:
        raise BoardRLError(f"--seeds must be at least 1, got {seeds}")
    params = load_params(params_file)
    params.experiment(experiment_id)
    name = study or experiment_id
    settings = resolve_settings(params, experiment_id, None, budget, list(range(seeds)))
    url = storage or f"journal:{SWEEP_DIR / (name + '.journal')}"
    result = run_sweep(params, settings, root=Path.cwd(), study_name=name, storage_url=url, n_trials=trials,
                       jobs=jobs, sampler_seed=seed, timeout_s=timeout, tracking_uri=tracking_uri,
                       out_dir=SWEEP_DIR / name, create_only=create_only, prune=prune)
    if create_only:
        typer.echo(f"study {name} ready in {result.storage} (MLflow parent run {result.parent_run_id}); "
                   f"{result.finished} finished trials")
        return
    if result.best_trial is None:
        typer.echo(f"study {name}: {result.finished} finished trials, none complete yet")
        return
    typer.echo(f"study {name} ({result.storage}): {result.finished} finished trials; best score "
               f"{result.best_score:.4f} (trial {result.best_trial})")
    for f in result.files:
        typer.echo(f"  {f}")
    import shlex

    typer.echo("apply: " + shlex.join(["boardrl", "sweep", "--apply", name, *(["--storage", storage] if storage else [])]))


def _apply_best(name: str, storage: str | None, run_it: bool) -> None:
    """Print (and with --run, run) the dvc exp run command for the study's best trial: one line a person can
    paste into a shell (values quoted once, ``sweeps.outputs.apply_line``)."""
    import subprocess

    import optuna

    from boardrl.sweeps.outputs import apply_command, apply_line
    from boardrl.sweeps.storage import SweepError, describe, make_storage

    url = storage or f"journal:{SWEEP_DIR / (name + '.journal')}"
    if storage is None and not (SWEEP_DIR / (name + ".journal")).is_file():
        raise SweepError(f"no study journal {SWEEP_DIR / (name + '.journal')}; pass --storage where study {name!r} lives")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        found = optuna.load_study(study_name=name, storage=make_storage(url))
        best = found.best_trial
    except (KeyError, ValueError) as exc:
        raise SweepError(f"study {name!r} in {describe(url)}: {str(exc).splitlines()[0]}") from None
    experiment = found.user_attrs.get("settings", {}).get("experiment")
    if not experiment:
        raise SweepError(f"study {name!r} was not made by boardrl sweep (no experiment recorded)")
    typer.echo(apply_line(found, experiment) + f"    # best trial {best.number}, score {best.value:.4f}")
    if run_it:
        raise SystemExit(subprocess.call(apply_command(found, experiment)))


# ---------------------------------------------------------------------------------------------- study
@app.command()
def train(
    experiment: Annotated[str, typer.Argument(help="An experiment id of params.yaml.", show_default=False)],
    params_file: Annotated[Path, typer.Option("--params", help="The params file.")] = Path("params.yaml"),
    out: Annotated[Path | None, typer.Option(
        "--out", help="Where its models, snapshots and summaries go (default: tryouts/<experiment>).")] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show the progress bar.")] = True,
    profile: Annotated[str | None, typer.Option(
        "--profile", help="Apply this profile's overlay (profiles/<name>.yaml) to the params first, e.g. full: "
                          "its budgets, and the experiments it alone defines.")] = None,
) -> None:
    """Train one experiment outside DVC, to try something out: its outputs go to --out, never over the pipeline's
    (models/, results/), and its MLflow runs go to this project's store like a stage's."""
    import os

    from boardrl.config import load_params, parse_params
    from boardrl.experiments.train import run_train
    from boardrl.tracking.store import TRACKING_ROOT_ENV

    if profile is None:
        params = load_params(params_file)
    else:
        from boardrl.experiments.profiles import effective_params

        if params_file != Path("params.yaml"):
            raise BoardRLError("--profile applies to the project's params.yaml; give --params or --profile, not both")
        params = parse_params(effective_params(Path.cwd(), profile))
    spec = params.spec(experiment)  # an unknown id: one line before any work
    where = (out or Path("tryouts") / experiment).resolve()
    if where == Path.cwd().resolve():
        raise BoardRLError("--out must not be the project itself: the pipeline's outputs live there")
    os.environ.setdefault(TRACKING_ROOT_ENV, str(Path.cwd().resolve()))
    trained = run_train(spec, where, progress=progress)
    seconds = sum(t.summary["seconds"] for t in trained)
    game = spec.game
    typer.echo(f"{experiment}: {len(trained)} seed(s) in {seconds:.1f} s -> {where}/models/{experiment}")
    typer.echo(f"play it: BOARDRL_ROOT={where} boardrl match {game} model:{experiment} random")


@app.command()
def register(
    project: Annotated[Path, typer.Option("--project", help="The project (or a profile's folder, e.g. "
                                          ".dvc/tmp/exps/profiles/full) whose results to register.")] = Path("."),
) -> None:
    """Register the report's headline agents in MLflow's model registry: one registered model per game, an alias
    per kind of learner and `champion` (other profiles: `<profile>-champion`); then play one as
    model:<game>@champion."""
    from boardrl.report.champions import register_headline

    for pick, reg in register_headline(project.resolve()):
        state = "new version" if reg.created else "version"
        typer.echo(f"{pick.game} {state} {reg.version}: {pick.experiment.id} seed {pick.seed} "
                   f"(aliases: {', '.join(reg.aliases)})")


@app.command()
def publish(
    profile: Annotated[str, typer.Argument(help="The profile whose finished run to publish (e.g. full).",
                                           show_default=False)],
    source: Annotated[Path | None, typer.Option("--source", help="The run's folder (default: the profile's "
                                                "lasting folder, .dvc/tmp/exps/profiles/<profile>).")] = None,
    recheck: Annotated[list[str] | None, typer.Option(
        "--recheck", help="After publishing, rerun this experiment's stages from nothing in the run's folder and "
                          "record whether its metrics file and models are byte-equal (repeatable).")] = None,
) -> None:
    """Publish a finished profile run into published/<profile>/: its report, results, stage wall times and
    headline models (with their content hashes), then renew README's headline block beside the default's."""
    from boardrl.report.published import MANIFEST, publish_profile
    from boardrl.report.published import recheck as recheck_experiment
    from boardrl.agents.models import project_root

    root = project_root()
    target = publish_profile(root, profile, source)
    for experiment in recheck or []:
        found = recheck_experiment(root, profile, experiment, source)
        same = found["metrics_equal"] and all(found["models_equal"].values())
        typer.echo(f"recheck {experiment}: {'byte-equal' if same else 'DIFFERENT'} metrics file and models after "
                   f"{found['seconds']:.0f} s of reruns ({MANIFEST} records it)")
        if not same:
            raise typer.Exit(1)
    readme = subprocess.run([sys.executable, str(root / "pipeline" / "report.py"), "--readme-only"], cwd=root)
    if readme.returncode != 0:
        raise BoardRLError(f"published {target}, but README's block could not be renewed (see above)")
    typer.echo(f"published {profile} to {target.relative_to(root)} ({MANIFEST} lists every file's sha256)")


@app.command()
def study(
    name: Annotated[str, typer.Argument(help="A study: studies/<name>.yaml.", show_default=False)],
    jobs: Annotated[int, typer.Option("--jobs", help="DVC queue workers: variations run side by side.")] = 1,
    check: Annotated[bool, typer.Option("--check", help="Only validate every variation; queue nothing.")] = False,
    collect: Annotated[bool, typer.Option("--collect", help="Queue nothing: write the table of the variations "
                                          "finished so far.")] = False,
    only: Annotated[str | None, typer.Option("--only", help="Run only these variations (comma-separated); the "
                                             "others keep their committed rows.", show_default=False)] = None,
) -> None:
    """Run a study: its variations as DVC experiments through DVC's queue (finished ones are skipped, so a killed
    study continues), tracked in MLflow; then its table, studies/<name>/results.md and .png."""
    from boardrl.experiments.study import check as check_study
    from boardrl.experiments.study import run_study

    if jobs < 1:
        raise BoardRLError(f"--jobs must be at least 1, got {jobs}")
    if check:
        check_study(Path.cwd(), name)
        return
    picked = None if only is None else tuple(v.strip() for v in only.split(",") if v.strip())
    raise SystemExit(run_study(Path.cwd(), name, jobs, collect=collect, only=picked))


if __name__ == "__main__":
    main()
