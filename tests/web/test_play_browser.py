"""The play page in a real browser: headless Chromium clicks through Connect 4 against ``perfect``.

The referee's values the page displays (the chips over the columns and the referee's list) are compared with
``Connect4Referee.move_scores`` at every position; perfect's replies must be optimal; the move list must mark the
moves; undo, a full column and bad links must behave.  The game starts from the empty board: the packaged
opening book (``solvers/connect4_book.py``) answers the first plies, where a search takes minutes.

A screenshot goes to the test's tmp directory, and to ``$BOARDRL_SCREENSHOT_DIR/play-connect4.png`` when that is
set (``BOARDRL_SCREENSHOT_DIR=docs`` renews the README's picture).  Skipped, saying why, only where no Chromium
binary is found (CI installs Debian's ``chromium``: ``.ci/run``).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from urllib.parse import urlencode

import pytest

from boardrl.solvers.registry import make_referee
from boardrl.web.positions import game_for
from web.chromium import chromium_page, find_chromium

pytestmark = pytest.mark.skipif(
    find_chromium() is None,
    reason="no Chromium binary on PATH (apt-get install chromium, or set BOARDRL_CHROMIUM); .ci/run installs it")

START = ""  # the empty board (the opening book answers it)
TURNS = 3

IDLE = "document.body.dataset.state === 'idle'"
MOVES = "(new URLSearchParams(location.search).get('moves') || '')"
SHOWN = """(() => {
  const panel = document.getElementById('referee-panel');
  if (document.body.dataset.state !== 'idle' || panel.dataset.status !== 'done' || panel.dataset.moves !== %s)
    return null;
  const list = {}, chips = {};
  for (const li of document.querySelectorAll('#referee-values li')) list[li.dataset.move] = Number(li.dataset.value);
  for (const c of document.querySelectorAll('#values-row .value-chip'))
    if (c.dataset.value !== undefined) chips[c.dataset.move] = Number(c.dataset.value);
  return {list, chips, summary: document.getElementById('referee-summary').textContent};
})()"""
MARKS = "[...document.querySelectorAll('#moves li')].map((li) => [Number(li.dataset.ply), li.dataset.mark || null])"


@pytest.fixture(scope="module")
def page():
    with chromium_page(width=1400, height=900) as p:
        yield p


def url(server, **params) -> str:
    return f"{server.base}/?{urlencode(params)}"


def test_connect4_against_perfect_with_the_referee(server, page, tmp_path):
    game = game_for("connect4")
    referee = make_referee(game)
    page.goto(url(server, game="connect4", opponent="perfect", seat="first", referee="1", moves=START))
    moves = START
    for _ in range(TURNS):
        shown = page.wait_for(SHOWN % json.dumps(moves), f"the referee's values after {moves}")
        state = game.replay(moves)
        exact = {str(c + 1): s for c, s in enumerate(referee.move_scores(state)) if s is not None}
        assert shown["list"] == exact and shown["chips"] == exact
        best = max(exact, key=exact.get)
        assert f"{exact[best]:+d}" in shown["summary"]

        page.click(f'.column[data-move="{best}"]')  # your move; perfect answers at once
        after = page.wait_for(f"{IDLE} && {MOVES}.length === {len(moves) + 2} && {MOVES}",
                              f"perfect's reply to {moves}{best}")
        assert after[: len(moves) + 1] == moves + best
        reply = int(after[-1]) - 1
        assert reply in referee.solve(game.replay(moves + best)).optimal_moves
        moves = after

    # The move list: the moves played here are marked by the referee (best for ours: we played the best score).
    played = range(len(START) + 1, len(moves) + 1)
    marks = dict(page.wait_for(f"(() => {{ const m = {MARKS}; return m.filter(([p, k]) => p > {len(START)} && "
                               f"k !== 'pending').length === {len(played)} ? m : null; }})()",
                               "the review of the moves played"))
    assert all(marks[p] == "best" for p in played[::2])  # ours
    assert all(marks[p] in ("best", "optimal") for p in played[1::2])  # perfect's keep the value
    page.wait_for(SHOWN % json.dumps(moves), "the referee's values of the last position")

    docs = os.environ.get("BOARDRL_SCREENSHOT_DIR")
    if docs:  # the README's picture: wait for every move's mark
        try:
            page.wait_for(f"{MARKS}.every(([p, k]) => k !== 'pending')", "the review of every move", timeout=300)
        except TimeoutError:
            pass
    shot = tmp_path / "play-connect4.png"
    page.screenshot(shot)
    assert shot.stat().st_size > 20_000
    if docs:
        shutil.copy(shot, Path(docs) / "play-connect4.png")

    # Undo takes back your last move and perfect's reply; the URL follows.
    page.click("#undo")
    assert page.wait_for(f"{IDLE} && {MOVES}.length === {len(moves) - 2} && {MOVES}", "undo") == moves[:-2]
    assert page.eval("document.getElementById('error').hidden")

    assert page.errors() == []
    outside = [u for u in page.requests() if not u.startswith((server.base, "data:", "about:"))]
    assert outside == [], "the page asked for something beyond the local server"


def test_errors_show_in_the_page(server, page):
    # A full column: the server's message in the page, the position unchanged.
    page.goto(url(server, game="connect4", opponent="perfect", seat="both", referee="0", moves="444444"))
    page.wait_for(f"{IDLE} && {MOVES} === '444444'", "the position with a full column")
    page.click('.column[data-move="4"]')
    error = page.wait_for("!document.getElementById('error').hidden && document.getElementById('error').textContent",
                          "the full-column message")
    assert "column 4 is full" in error
    assert page.eval(MOVES) == "444444"

    # A bad link: the message, and the start position instead.
    page.goto(url(server, game="connect4", opponent="random", seat="both", moves="44x"))
    error = page.wait_for(f"{IDLE} && !document.getElementById('error').hidden && "
                          "document.getElementById('error').textContent", "the bad-link message")
    assert "bad move 'x'" in error and page.eval(MOVES) == ""

    # An unknown opponent: make_agent's own message.
    page.goto(url(server, game="tictactoe", opponent="nobody", seat="second"))
    error = page.wait_for(f"{IDLE} && !document.getElementById('error').hidden && "
                          "document.getElementById('error').textContent", "the unknown-agent message")
    assert "unknown agent 'nobody'" in error

    # No referee for Conniption: the toggle and the panel say so.
    page.goto(url(server, game="conniption", opponent="alphabeta", seat="both", referee="1", moves="n4n"))
    page.wait_for(f"{IDLE} && document.getElementById('referee-panel').dataset.status === 'unavailable'",
                  "the no-referee note")
    assert "no referee for Conniption" in page.eval("document.getElementById('referee-label').textContent")
    assert "no referee for conniption" in page.eval("document.getElementById('referee-summary').textContent")
    page.click('#actions button[data-move="f"]')  # Conniption's flip is a button
    page.wait_for(f"{IDLE} && {MOVES} === 'n4n,f'", "the flip")
    assert page.errors() == []


WHO = "[...document.querySelectorAll('#moves li .who')].map((w) => [w.textContent, w.dataset.credit])"
PANEL_DONE = ("document.getElementById('referee-panel').dataset.status === 'done' && "
              "document.getElementById('referee-panel').dataset.moves === %s")


def test_a_lost_position_is_coloured_by_outcome_with_the_best_score_starred(server, page):
    """Issue 38: in a lost Connect 4 position every move keeps the loss, but -2 is better than -4 and -14.  The
    chips and the list are coloured by outcome (all "loss" here) and only the slowest losses carry the star; the
    page says what "optimal" means; the column numbers stand under the board."""
    moves = "44444352335"
    game = game_for("connect4")
    scores = make_referee(game).move_scores(game.replay(moves))
    page.goto(url(server, game="connect4", opponent="perfect", seat="both", referee="1", moves=moves))
    page.wait_for(PANEL_DONE % json.dumps(moves) + f" && {IDLE}", "the referee's values of the lost position")
    chips = page.eval("[...document.querySelectorAll('#values-row .value-chip')].map((c) => "
                      "[c.dataset.move, Number(c.dataset.value), c.dataset.outcome, c.dataset.star, c.className])")
    assert {m: v for m, v, *_ in chips} == {str(c + 1): s for c, s in enumerate(scores)}
    assert all(o == "loss" and "loss" in cls.split() for _, _, o, _, cls in chips)
    slowest = max(scores)
    assert [m for m, v, _, star, _ in chips if star == "1"] == [str(c + 1) for c, s in enumerate(scores)
                                                              if s == slowest]
    items = page.eval("[...document.querySelectorAll('#referee-values li')].map((li) => [li.dataset.outcome, "
                      "li.dataset.star, li.textContent])")
    assert all(o == "loss" for o, _, _ in items) and all(t.startswith("★") == (s == "1") for _, s, t in items)
    assert "Every move loses; ★ slowest loss (-2): 2, 3, 6" in page.eval(
        "document.getElementById('referee-summary').textContent")
    assert "value-keeping" in page.eval("document.getElementById('referee-meaning').textContent")
    numbers = page.eval("""(() => {
        const cols = document.querySelector('.columns').getBoundingClientRect();
        return [...document.querySelectorAll('.col-numbers .col-number')].map((n) => {
            const r = n.getBoundingClientRect();
            return [n.textContent, r.top >= cols.bottom - 1];
        });
    })()""")
    assert numbers == [[str(c), True] for c in range(1, 8)]
    assert page.errors() == []


def test_loaded_moves_are_nobodys_and_moves_made_here_are_credited(server, page):
    """A link's moves are not the opponent's (perfect did not play them); your move and perfect's reply made on
    the page are; the permalink keeps the credit (``by``) and a reload shows the same names."""
    page.goto(url(server, game="connect4", opponent="perfect", seat="first", referee="0", moves="4453"))
    page.wait_for(f"{IDLE} && {MOVES} === '4453'", "the loaded position")
    assert page.eval(WHO) == [["red", "nobody"], ["yellow", "nobody"], ["red", "nobody"], ["yellow", "nobody"]]
    page.click('.column[data-move="4"]')
    after = page.wait_for(f"{IDLE} && {MOVES}.length === 6 && {MOVES}", "perfect's reply")
    who = page.eval(WHO)
    assert who[:4] == [["red", "nobody"], ["yellow", "nobody"]] * 2
    assert who[4:] == [["you", "you"], ["perfect", "opponent"]]
    link = page.eval("document.getElementById('permalink').href")
    assert f"moves={after}" in link and "by=----yo" in link
    page.goto(link)
    page.wait_for(f"{IDLE} && {MOVES} === '{after}'", "the reloaded position")
    assert page.eval(WHO) == who
    assert page.errors() == []


def test_the_referee_plays_the_best_move_for_you(server, page):
    # X (you) has 1 and 2 against O's 4 and 5: only cell 3 wins at once (the referee's unique best move).
    page.goto(url(server, game="tictactoe", opponent="random", seat="first", referee="0", moves="1425"))
    page.wait_for(f"{IDLE} && {MOVES} === '1425' && !document.getElementById('referee-move').disabled",
                  "the position and the referee's button")
    page.click("#referee-move")
    page.wait_for(f"{IDLE} && {MOVES} === '14253'", "the referee's move")
    assert page.eval(WHO)[-1] == ["referee", "referee"]
    assert page.eval("document.getElementById('status').textContent") == "Game over: You win."
    assert page.eval("document.getElementById('referee-move').disabled")
    assert page.errors() == []


def test_permalink_keeps_commas_and_computing_shows_the_time(server, page):
    page.goto(url(server, game="dots_and_boxes_2x2", opponent="random", seat="both", referee="0", moves="0,1"))
    page.wait_for(f"{IDLE} && {MOVES} === '0,1'", "the Dots and Boxes position")
    text = page.eval("document.getElementById('permalink').textContent")
    assert "moves=0,1" in text and "%2C" not in text
    # A 9-stone Connect 4 position takes the referee seconds: the time counts up while it computes.
    moves = "123456712"
    page.goto(url(server, game="connect4", opponent="perfect", seat="both", referee="1", moves=moves))
    shown = page.wait_for(r"(() => { const t = document.getElementById('referee-summary').textContent; "
                          r"return /^computing… (0\.[2-9]|[1-9][0-9]*\.[0-9]) s$/.test(t) && t; })()",
                          "the elapsed time while computing")
    assert shown.startswith("computing… ")
    page.wait_for(PANEL_DONE % json.dumps(moves), "the referee's values", timeout=120)
    assert page.errors() == []
