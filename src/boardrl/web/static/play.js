// boardrl play: the page's whole state is its URL (game, opponent, seat, seed, referee, moves); the server
// replays the move string on every request, so undo is a shorter string and a link restores everything.
// The server answers errors with {"error": "..."}; the page shows that line and keeps the position it had.
"use strict";

const DEFAULT_GAME = "connect4";
const DEFAULT_OPPONENT = "alphabeta";
const SEATS = ["first", "second", "both"];
const SVG = "http://www.w3.org/2000/svg";

const S = {
  games: new Map(), gameId: DEFAULT_GAME, opponent: DEFAULT_OPPONENT, spec: "", seat: "first", seed: "0",
  referee: false, moves: "", pos: null,
  gen: 0,          // bumped by every position change the user asks for: stale answers are dropped
  thinking: false, // the opponent is choosing a move
  ref: null,       // the referee's values for ref.moves
  review: null,    // the referee's marks of the played moves, for review.moves
  refKey: null,    // the position the referee is being asked about
};

const $ = (id) => document.getElementById(id);

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

async function api(path, params) {
  let r;
  try {
    r = await fetch(path + "?" + new URLSearchParams(params).toString());
  } catch (e) {
    return {status: 0, body: {error: "the server did not answer (is `boardrl serve` still running?)"}};
  }
  let body;
  try {
    body = await r.json();
  } catch (e) {
    body = {error: `${r.status} ${r.statusText}`};
  }
  return {status: r.status, body};
}

// ------------------------------------------------------------------------------------------ settings and URL
function spec() {
  return S.spec.trim() || S.opponent;
}

function humanPlays(player) {
  return S.seat === "both" || (S.seat === "first" ? player === 0 : player === 1);
}

function playerName(p) {
  if (S.seat === "both") return p === 0 ? "first" : "second";
  return humanPlays(p) ? "you" : spec();
}

function readURL() {
  const q = new URLSearchParams(location.search);
  S.gameId = (q.get("game") || DEFAULT_GAME).trim();
  S.seat = SEATS.includes(q.get("seat")) ? q.get("seat") : "first";
  S.seed = q.get("seed") || "0";
  S.referee = ["1", "on", "true", "yes"].includes((q.get("referee") || "").toLowerCase());
  S.moves = q.get("moves") || "";
  return q.get("opponent");
}

function writeURL() {
  const q = new URLSearchParams({game: S.gameId, opponent: spec(), seat: S.seat, seed: S.seed,
                                 referee: S.referee ? "1" : "0", moves: S.moves});
  const url = location.pathname + "?" + q.toString();
  history.replaceState(null, "", url);
  $("permalink").href = url;
  $("permalink").textContent = location.origin + url;
}

function fillGames() {
  const sel = $("game");
  sel.replaceChildren();
  for (const g of S.games.values()) {
    const o = el("option", "", g.name);
    o.value = g.id;
    sel.append(o);
  }
  sel.value = S.gameId;
}

function fillOpponents(wanted) {
  const g = S.games.get(S.gameId);
  const sel = $("opponent");
  sel.replaceChildren();
  const builtIn = el("optgroup");
  builtIn.label = "built-in agents";
  for (const n of g.opponents) builtIn.append(Object.assign(el("option", "", n), {value: n}));
  sel.append(builtIn);
  if (g.models.length) {
    const models = el("optgroup");
    models.label = "trained models";
    for (const m of g.models) models.append(Object.assign(el("option", "", m), {value: m}));
    sel.append(models);
  }
  const names = [...g.opponents, ...g.models];
  const fallback = names.includes(DEFAULT_OPPONENT) ? DEFAULT_OPPONENT : names[0];
  if (wanted && names.includes(wanted)) {
    S.opponent = wanted;
    S.spec = "";
  } else {
    S.opponent = names.includes(S.opponent) ? S.opponent : fallback;
    S.spec = wanted || "";
  }
  sel.value = S.opponent;
  $("opponent-spec").value = S.spec;
  const label = $("referee-label");
  const box = $("referee");
  box.checked = S.referee;
  label.textContent = g.referee ? "show the referee" : `show the referee (no referee for ${g.name})`;
}

// ------------------------------------------------------------------------------------------ errors and status
function showError(msg) {
  const e = $("error");
  e.textContent = msg || "";
  e.hidden = !msg;
}

function setBusy(busy) {
  document.body.dataset.state = busy ? "busy" : "idle";
}

function renderStatus() {
  const p = S.pos;
  let text = "";
  if (!p) text = "";
  else if (p.over) {
    const w = p.winner;
    const who = w === null ? "Draw" : S.seat === "both" ? `${playerName(w)} player wins`
      : humanPlays(w) ? "You win" : `${spec()} wins`;
    const score = p.board.score ? ` ${p.board.score[0]}-${p.board.score[1]}` : "";
    text = `Game over: ${who}${score}.`;
  } else if (S.thinking) text = `${spec()} is thinking…`;
  else if (humanPlays(p.to_move)) text = S.seat === "both" ? `${playerName(p.to_move)} player to move` : "Your move";
  else text = `${spec()} to move`;
  $("status").textContent = text;
  $("undo").disabled = !p || undoTarget() === null;
}

function colourName(p) {
  const dots = S.pos && S.pos.board.kind === "dots";
  if (S.pos && S.pos.game === "tictactoe") return p === 0 ? "X" : "O";
  return p === 0 ? "red" : dots ? "blue" : "yellow";
}

function renderInfo() {
  const p = S.pos;
  if (!p) return;
  const parts = [0, 1].map((k) => `${playerName(k)}: ${colourName(k)} (${k === 0 ? "first" : "second"})`);
  const b = p.board;
  if (b.stage !== undefined && !p.over) {
    const what = ["flip or not, then place", "place a piece", "flip or not"][b.stage];
    parts.push(`stage ${b.stage + 1} of 3: ${what}`);
  }
  if (b.flips_left) parts.push(`flips left: first ${b.flips_left[0]}, second ${b.flips_left[1]}`);
  if (b.upside_down) parts.push("the board is upside down");
  if (b.score) parts.push(`boxes: first ${b.score[0]}, second ${b.score[1]}`);
  $("info").textContent = parts.join(" · ");
}

// ------------------------------------------------------------------------------------------ boards
function refValues() {
  // The referee's values, only when they are about the position on the board.
  return S.referee && S.ref && S.ref.moves === S.moves && S.ref.status === "done" ? S.ref : null;
}

function valueOf(move) {
  const r = refValues();
  return r ? r.values.find((m) => m.move === move) : undefined;
}

function renderBoard() {
  const p = S.pos;
  const board = $("board");
  const actions = $("actions");
  board.replaceChildren();
  actions.replaceChildren();
  if (!p) return;
  const b = p.board;
  if (b.kind === "columns") board.append(columnsBoard(b));
  else if (b.kind === "cells") board.append(cellsBoard(b));
  else if (b.kind === "dots") board.append(dotsBoard(b));
  for (const btn of b.buttons || []) {
    const e = el("button", "stage-move", btn.label);
    e.type = "button";
    e.dataset.move = btn.move;
    e.disabled = !p.legal.includes(btn.move);
    e.addEventListener("click", () => onMove(btn.move));
    actions.append(e);
  }
  renderInfo();
}

function chip(v) {
  const c = el("div", "value-chip");
  if (v) {
    c.textContent = v.value > 0 ? `+${v.value}` : `${v.value}`;
    c.classList.add(v.mark);
    c.title = v.text;
    c.dataset.value = v.value;
  }
  return c;
}

function columnsBoard(b) {
  const wrap = el("div", "columns-board" + (b.upside_down ? " upside-down" : ""));
  wrap.style.setProperty("--cols", b.cols);
  const values = el("div", "values-row");
  values.id = "values-row";
  const cols = el("div", "columns");
  for (let c = 0; c < b.cols; c++) {
    const move = b.moves[c];
    const ch = chip(valueOf(move));
    ch.dataset.move = move;
    values.append(ch);
    const col = el("button", "column");
    col.type = "button";
    col.dataset.move = move;
    col.setAttribute("aria-label", `column ${move}`);
    for (let r = 0; r < b.rows; r++) {
      const cell = el("div", "cell");
      const who = b.cells[r][c];
      if (who !== null) cell.classList.add("p" + who);
      if (b.last && b.last[0] === r && b.last[1] === c) cell.classList.add("last");
      col.append(cell);
    }
    col.addEventListener("click", () => onMove(move));
    cols.append(col);
  }
  wrap.append(values, cols);
  return wrap;
}

function cellsBoard(b) {
  const grid = el("div", "ttt");
  b.cells.forEach((who, i) => {
    const move = b.moves[i];
    const btn = el("button", who === null ? "" : "p" + who, who === null ? "" : who === 0 ? "X" : "O");
    btn.type = "button";
    btn.dataset.move = move;
    btn.setAttribute("aria-label", `cell ${move}`);
    if (b.last === i) btn.classList.add("last");
    const v = who === null ? valueOf(move) : undefined;
    if (v) {
      const tag = el("span", "cell-value " + v.mark, v.outcome);
      tag.title = v.text;
      tag.dataset.value = v.value;
      btn.append(tag);
    }
    btn.addEventListener("click", () => onMove(move));
    grid.append(btn);
  });
  return grid;
}

function dotsBoard(b) {
  const U = 90;
  const M = 26;
  const x = (col) => M + col * U;
  const y = (row) => M + row * U;
  const root = svg("svg", {class: "dots", width: 2 * M + b.cols * U, height: 2 * M + b.rows * U,
                           viewBox: `0 0 ${2 * M + b.cols * U} ${2 * M + b.rows * U}`});
  for (const box of b.boxes) {
    const own = box.owner === null ? "" : " own" + box.owner;
    root.append(svg("rect", {class: "box" + own, x: x(box.col), y: y(box.row), width: U, height: U}));
    if (box.owner !== null) {
      root.append(svg("text", {class: "box-label", x: x(box.col) + U / 2, y: y(box.row) + U / 2,
                               fill: box.owner === 0 ? "#d1392b" : "#2a6fdb"}, box.owner === 0 ? "1" : "2"));
    }
  }
  for (const e of b.edges) {
    const [r0, c0] = e.from;
    const [r1, c1] = e.to;
    const coords = {x1: x(c0), y1: y(r0), x2: x(c1), y2: y(r1)};
    const cls = "edge" + (e.by === null ? "" : " by" + e.by) + (b.last === e.move ? " last" : "");
    root.append(svg("line", {...coords, class: cls, "data-edge": e.move}));
    if (e.by === null) {
      const hit = svg("line", {...coords, class: "hit", "data-move": e.move});
      hit.append(svg("title", {}, `edge ${e.move}`));
      hit.addEventListener("click", () => onMove(e.move));
      root.append(hit);
      const v = valueOf(e.move);
      if (v) {
        const t = svg("text", {class: "edge-value " + v.mark, x: (x(c0) + x(c1)) / 2, y: (y(r0) + y(r1)) / 2,
                               "data-move": e.move, "data-value": v.value, "paint-order": "stroke",
                               stroke: "#fff", "stroke-width": 4}, v.value > 0 ? `+${v.value}` : `${v.value}`);
        t.append(svg("title", {}, v.text));
        root.append(t);
      }
    }
  }
  for (let r = 0; r <= b.rows; r++) {
    for (let c = 0; c <= b.cols; c++) root.append(svg("circle", {class: "dot", cx: x(c), cy: y(r), r: 6}));
  }
  return root;
}

// ------------------------------------------------------------------------------------------ moves and referee
function moveLabel(m) {
  return m === "f" ? "flip" : m === "n" ? "no flip" : m;
}

function renderMoves() {
  const list = $("moves");
  list.replaceChildren();
  if (!S.pos) return;
  const judged = S.referee && S.games.get(S.gameId).referee;  // no marks where there is no referee
  const marks = judged && S.review && S.review.moves === S.moves ? S.review.review : null;
  for (const h of S.pos.history) {
    const li = el("li");
    li.dataset.ply = h.ply;
    li.append(el("span", "who", playerName(h.player)), el("span", "mv", moveLabel(h.move)));
    const row = marks ? marks[h.ply - 1] : null;
    if (judged) {
      const mark = row && row.mark ? row.mark : "pending";
      const sign = mark === "mistake" ? "✗ " : mark === "pending" ? "" : "✓ ";
      const m = el("span", "mark " + mark, " " + sign + (row ? row.short : "…"));
      li.dataset.mark = mark;
      li.title = row ? row.text : "the referee is computing";
      li.append(m);
    }
    li.addEventListener("click", () => go(h.after));
    list.append(li);
  }
  list.scrollTop = list.scrollHeight;
}

function renderReferee() {
  const panel = $("referee-panel");
  panel.hidden = !S.referee;
  if (!S.referee) return;
  const list = $("referee-values");
  const summary = $("referee-summary");
  list.replaceChildren();
  const r = S.ref && S.ref.moves === S.moves ? S.ref : null;
  panel.dataset.moves = S.moves;
  panel.dataset.status = r ? r.status : "computing";
  if (!r || r.status === "computing") {
    summary.textContent = `computing… ${r && r.seconds ? r.seconds + " s" : ""}`.trim();
    return;
  }
  if (r.status === "unavailable") {
    summary.textContent = `No referee for this game: ${r.reason}.`;
    return;
  }
  if (r.status === "error") {
    summary.textContent = `The referee failed: ${r.error}`;
    return;
  }
  if (!r.values.length) {
    summary.textContent = "The game is over.";
    return;
  }
  const mover = S.pos ? playerName(S.pos.to_move) : "";
  summary.textContent = `Value for the side to move (${mover}), ${r.unit}: ${r.text}; optimal moves: ` +
    r.optimal_moves.map(moveLabel).join(", ") + ".";
  for (const m of r.values) {
    const li = el("li", m.mark, `${moveLabel(m.move)}: ${m.text}`);
    li.dataset.move = m.move;
    li.dataset.value = m.value;
    li.dataset.mark = m.mark;
    list.append(li);
  }
}

function refreshReferee() {
  S.refKey = S.referee ? S.gameId + "|" + S.moves : null;
  renderReferee();
  renderMoves();
  if (!S.referee) return;
  const key = S.refKey;
  const moves = S.moves;
  pollReferee(key, moves);
  if (S.pos && S.pos.plies) pollReview(key, moves);
  else S.review = {moves, review: []};
}

async function pollReferee(key, moves) {
  for (;;) {
    const r = await api("/api/referee", {game: S.gameId, moves});
    if (S.refKey !== key) return;
    S.ref = r.status === 200 || r.status === 202 ? r.body : {status: "error", moves, error: r.body.error};
    renderReferee();
    if (r.status !== 202) break;
    await sleep(150);
  }
  renderBoard();
}

async function pollReview(key, moves) {
  for (;;) {
    const r = await api("/api/review", {game: S.gameId, moves});
    if (S.refKey !== key) return;
    if (r.status !== 200 && r.status !== 202) return;
    if (r.body.status === "unavailable") return;
    S.review = r.body;
    renderMoves();
    if (r.status !== 202) return;
    await sleep(150);
  }
}

// ------------------------------------------------------------------------------------------ playing
function setPosition(pos) {
  S.pos = pos;
  S.moves = pos.moves;
  writeURL();
  renderBoard();
  renderStatus();
  refreshReferee();
}

async function go(moves, play) {
  // Show the position after `moves` (plus the move `play`), then let the opponent move while it is its turn.
  const gen = ++S.gen;
  S.thinking = false;
  setBusy(true);
  const params = {game: S.gameId, moves};
  if (play !== undefined) params.play = play;
  const r = await api("/api/position", params);
  if (gen !== S.gen) return;
  if (r.status !== 200) {
    showError(r.body.error);
    setBusy(false);
    renderStatus();
    return;
  }
  showError(null);
  setPosition(r.body);
  await opponentMoves(gen);
}

async function opponentMoves(gen) {
  while (gen === S.gen && S.pos && !S.pos.over && !humanPlays(S.pos.to_move)) {
    S.thinking = true;
    setBusy(true);
    renderStatus();
    const r = await api("/api/agent", {game: S.gameId, moves: S.moves, opponent: spec(), seed: S.seed});
    if (gen !== S.gen) return;
    S.thinking = false;
    if (r.status !== 200) {
      showError(r.body.error);
      break;
    }
    setPosition(r.body.position);
  }
  if (gen === S.gen) {
    setBusy(false);
    renderStatus();
  }
}

function onMove(move) {
  const p = S.pos;
  if (!p) return;
  if (p.over) {
    showError("The game is over: start a new game or undo.");
    return;
  }
  if (S.thinking || !humanPlays(p.to_move)) {
    showError(`It is ${spec()}'s turn; wait for its move.`);
    return;
  }
  go(S.moves, move);
}

function undoTarget() {
  // The position before your last move (the opponent's replies after it go too); null if you have none.
  const h = S.pos ? S.pos.history : [];
  let k = h.length;
  if (S.seat !== "both") while (k > 0 && !humanPlays(h[k - 1].player)) k--;
  if (k === 0) return null;
  k--;
  return k ? h[k - 1].after : "";
}

// ------------------------------------------------------------------------------------------ start
async function start() {
  const wanted = readURL();
  const r = await api("/api/games", S.gameId ? {extra: S.gameId} : {});
  if (r.status !== 200) {
    showError(r.body.error);
    S.gameId = DEFAULT_GAME;
    const again = await api("/api/games", {});
    if (again.status !== 200) return;
    r.body = again.body;
  }
  for (const g of r.body.games) S.games.set(g.id, g);
  fillGames();
  fillOpponents(wanted);
  $("seat").value = S.seat;
  $("seed").value = S.seed;

  $("game").addEventListener("change", (e) => {
    S.gameId = e.target.value;
    S.ref = S.review = null;
    fillOpponents(spec());
    go("");
  });
  $("opponent").addEventListener("change", (e) => {
    S.opponent = e.target.value;
    S.spec = "";
    $("opponent-spec").value = "";
    go(S.moves);
  });
  $("opponent-spec").addEventListener("change", (e) => {
    S.spec = e.target.value;
    go(S.moves);
  });
  $("seat").addEventListener("change", (e) => {
    S.seat = e.target.value;
    go(S.moves);
  });
  $("seed").addEventListener("change", (e) => {
    S.seed = e.target.value;
    writeURL();
  });
  $("referee").addEventListener("change", (e) => {
    S.referee = e.target.checked;
    writeURL();
    renderBoard();
    refreshReferee();
  });
  $("new-game").addEventListener("click", () => go(""));
  $("undo").addEventListener("click", () => {
    const target = undoTarget();
    if (target !== null) go(target);
  });
  await go(S.moves);
  if (!S.pos) {  // a link with a bad move string: say why, and show the start instead of nothing
    const why = $("error").textContent;
    await go("");
    showError(`${why} (showing the start position instead)`);
  }
}

document.addEventListener("DOMContentLoaded", start);
