"""``boardrl serve``: play any agent in the browser, with the referee's exact values beside every move.

The app is FastAPI (served by uvicorn) over one static page (``static/index.html``, vanilla JavaScript, no build
step).  Every endpoint is a GET that takes the whole game in its query (``game``, ``moves``: see
``positions.py`` for the move strings), so the server keeps no per-user state: the page's URL alone restores a
game, undo is a shorter move string, and any number of tabs can play at once.

Endpoints (JSON):

* ``/api/games``: the games, their opponents (built-in agents and trained ``model:<id>``) and whether a referee
  exists;
* ``/api/position?game=&moves=[&play=]``: the board after ``moves`` (plus one move ``play`` in the game's
  notation);
* ``/api/agent?game=&moves=&opponent=&seed=``: the opponent's reply and the position after it;
* ``/api/referee?game=&moves=``: the exact value of each legal move (``analysis.py``: with its outcome class,
  the best of each class, a summary and what "optimal" means), or ``"computing"`` (202) while the referee works
  (``jobs.py``; solved positions are kept on disk across restarts, ``cache.py``), or ``"unavailable"`` with the
  reason;
* ``/api/review?game=&moves=``: each played move marked best / optimal / mistake, and by how much.

Bad input (an unknown game or agent, a malformed move string, a full column, a search over the limits) is a 400
answer with one line of JSON, ``{"error": "..."}``, and so is every other error the app can name; a model outside
the project is a 403; a bug is a 500 with the same shape.  The server never dies on a request.  It binds 127.0.0.1
unless told otherwise (``boardrl serve --host``).

Bounded work: a referee wait is at most ``max_wait_s`` and is awaited without a thread (at most ``max_waiters``
at once); an opponent's move is at most ``players.AGENT_TIMEOUT_S`` with at most ``players.MAX_AGENT_WAITERS``
waiting.  Past a bound the answer is a 503 with ``Retry-After`` at once, so a burst of slow requests never holds
up a cheap one.  Models load only from the project (``model:<experiment id>`` or a directory inside it) unless
the server is started with ``--allow-model-path DIR``.
"""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, AsyncIterator, Literal, Sequence

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from boardrl.errors import BoardRLError
from boardrl.games import GAME_IDS
from boardrl.web.analysis import review as review_moves
from boardrl.web.analysis import values_json
from boardrl.web.cache import DiskCache, default_cache_dir
from boardrl.web.jobs import MAX_WAITERS, Busy, RefereeService, one_line
from boardrl.web.players import AGENT_TIMEOUT_S, ModelOutsideError, Opponents, opponent_names, trained_models
from boardrl.web.positions import Position, game_for, game_name, parse_one, position_json, replay

STATIC = Path(__file__).resolve().parent / "static"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
#: How long a referee request waits for the values before answering "computing" (the page asks again).
REFEREE_WAIT_S = 1.0
#: The longest wait a request may ask for (``boardrl serve --max-wait``): the page asks with 1 s.
MAX_WAIT_S = 30.0
#: Seconds a client is told to wait before asking again after a 503.
RETRY_AFTER_S = 1

log = logging.getLogger("boardrl.web")

GameQ = Annotated[str, Query(description="tictactoe, connect4, dots_and_boxes_RxC or conniption")]
MovesQ = Annotated[str, Query(description="moves from the start in the game's notation, commas for spaces")]
WaitQ = Annotated[float, Query(ge=0, description="seconds to wait for the referee (at most the server's --max-wait)")]


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": one_line(message) if message else "error"}, status_code=status)


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(x) for x in err.get("loc", ()) if x not in ("query", "body"))
        parts.append(f"{where}: {err.get('msg', 'invalid')}" if where else str(err.get("msg", "invalid")))
    return "bad request: " + "; ".join(parts)


def create_app(model_paths: Sequence[Path] = (), max_wait_s: float = MAX_WAIT_S, max_waiters: int = MAX_WAITERS,
               agent_timeout_s: float = AGENT_TIMEOUT_S,
               cache_dir: Path | None | Literal["default"] = "default") -> FastAPI:
    """The app, with its own referee and agent processes (the referees' started with the server, the agents' on
    first use; all ended with the app).

    ``model_paths``: directories beyond the project root that ``model:`` opponents may load from; ``max_wait_s``:
    the longest referee wait a request may ask for; ``max_waiters``: referee waits at once (more: 503);
    ``agent_timeout_s``: the longest an opponent may think about one move (more: stopped, 503); ``cache_dir``:
    where solved positions are kept across restarts (``cache.py``; "default": ``$BOARDRL_REFEREE_CACHE`` or
    ``<project>/build/referee-cache``; None: no disk cache)."""
    opponents = Opponents(model_paths, timeout_s=agent_timeout_s)
    folder = default_cache_dir() if cache_dir == "default" else cache_dir
    referees = RefereeService(max_waiters=max_waiters, cache=DiskCache(folder) if folder is not None else None)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        referees.start()  # the referee processes start with the server, not on the first request
        yield
        opponents.close()  # the child processes end with the server, not whenever the interpreter exits
        referees.close()

    app = FastAPI(title="boardrl: play in the browser", docs_url=None, redoc_url=None, openapi_url=None,
                  lifespan=lifespan)

    @app.exception_handler(BoardRLError)
    async def bad_input(request: Request, exc: BoardRLError) -> JSONResponse:
        return _error(403 if isinstance(exc, ModelOutsideError) else 400, str(exc))

    @app.exception_handler(Busy)
    async def busy(request: Request, exc: Busy) -> JSONResponse:
        answer = _error(503, str(exc))
        answer.headers["Retry-After"] = str(RETRY_AFTER_S)
        return answer

    @app.exception_handler(RequestValidationError)
    async def bad_query(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(400, _validation_message(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(Exception)
    async def server_error(request: Request, exc: Exception) -> JSONResponse:
        log.exception("%s %s failed", request.method, request.url.path)
        return _error(500, f"internal error: {type(exc).__name__}: {exc}")

    def check_wait(wait: float) -> None:
        if wait > max_wait_s:
            raise BoardRLError(f"bad request: wait: at most {max_wait_s:g} seconds on this server, got {wait:g}")

    def position(game: str, moves: str, play: str | None = None) -> Position:
        pos = replay(game_for(game), moves)
        if play is not None:
            pos = pos.play(parse_one(pos.game, play))
        return pos

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    @app.get("/api/games")
    def games(extra: Annotated[str | None, Query(description="one more game id, e.g. dots_and_boxes_2x3")] = None
              ) -> dict[str, Any]:
        out = []
        ids = list(GAME_IDS)
        if extra and extra.strip() not in ids:
            ids.append(game_for(extra).game_id)  # an unknown id is the usual 400
        for gid in ids:
            g = game_for(gid)
            names = opponent_names(g)
            # The perfect player exists exactly where a referee does (agents/__init__.py); asking the registry
            # costs nothing, while building a referee may take seconds.
            out.append({"id": gid, "name": game_name(g), "opponents": names, "models": trained_models(g),
                        "referee": "perfect" in names})
        return {"games": out}

    @app.get("/api/position")
    def get_position(game: GameQ, moves: MovesQ = "", play: Annotated[str | None, Query()] = None) -> dict[str, Any]:
        return position_json(position(game, moves, play))

    @app.get("/api/agent")
    def agent_move(game: GameQ, opponent: Annotated[str, Query()], moves: MovesQ = "",
                   seed: Annotated[int, Query(ge=0, le=2**63 - 1)] = 0) -> dict[str, Any]:
        pos = position(game, moves)
        move = opponents.reply(pos, opponent, seed)
        return {"move": pos.game.format_move(move), "opponent": opponent.strip(),
                "position": position_json(pos.play(move))}

    @app.get("/api/referee")
    async def referee(game: GameQ, moves: MovesQ = "", wait: WaitQ = REFEREE_WAIT_S) -> JSONResponse:
        check_wait(wait)
        pos = position(game, moves)  # at most MAX_MOVES_TEXT characters: cheap enough for the event loop
        gid = pos.game.game_id
        referees.submit(gid, [pos.state])
        await referees.wait(gid, [pos.state], wait)
        if gid in referees.unavailable:
            return JSONResponse({"status": "unavailable", "reason": referees.unavailable[gid], "moves": pos.text})
        mv = referees.result(gid, pos.state)
        if mv is None:
            return JSONResponse({"status": "computing", "moves": pos.text,
                                 "seconds": round(referees.busy_seconds(), 1)}, status_code=202)
        return JSONResponse({"status": "done", "moves": pos.text, **values_json(pos.game, mv)})

    @app.get("/api/review")
    async def review(game: GameQ, moves: MovesQ = "", wait: WaitQ = REFEREE_WAIT_S) -> JSONResponse:
        check_wait(wait)
        pos = position(game, moves)
        gid = pos.game.game_id
        earlier = list(pos.states[:-1])
        referees.submit(gid, earlier, review=True)
        await referees.wait(gid, earlier, wait)
        if gid in referees.unavailable:
            return JSONResponse({"status": "unavailable", "reason": referees.unavailable[gid], "moves": pos.text})
        rows = review_moves(pos.game, pos.actions, pos.states, lambda s: referees.result(gid, s))
        done = all(r["mark"] is not None for r in rows)
        return JSONResponse({"status": "done" if done else "computing", "moves": pos.text, "review": rows},
                            status_code=200 if done else 202)

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


def serve(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, log_level: str = "info", **limits: Any) -> None:
    """Run the app with uvicorn until interrupted; ``limits`` are ``create_app``'s keyword arguments."""
    import uvicorn

    uvicorn.run(create_app(**limits), host=host, port=port, log_level=log_level)
