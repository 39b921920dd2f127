// boardrl play: the page's whole state is its URL (game, opponent, seat, seed, referee, moves, by); the server
// replays the move string on every request, so undo is a shorter string and a link restores everything.
// `by` credits each ply to whoever made it on a page: y (you), o (the opponent named in the URL), r (the referee's
// move, played by its button) or - (nobody known: moves of a link without `by`, or of an opponent since changed).
// Why: a position loaded from a link must not credit its moves to the opponent now chosen (a `perfect` that
// "blundered" moves it never made).
// The server answers errors with {"error": "..."}; the page shows that line and keeps the position it had.
"use strict";

const DEFAULT_GAME = "connect4";
const DEFAULT_OPPONENT = "alphabeta";
const SEATS = ["first", "second", "both"];
const SVG = "http://www.w3.org/2000/svg";

const S = {
  games: new Map(), gameId: DEFAULT_GAME, opponent: DEFAULT_OPPONENT, spec: "", seat: "first", seed: "0",
  referee: false, moves: "", pos: null,
  by: "",          // who made each ply (see the top of this file), aligned with `moves`
  gen: 0,          // bumped by every position change the user asks for: stale answers are dropped
  thinking: false, // the opponent is choosing a move
  ref: null,       // the referee's values for ref.moves
  review: null,    // the referee's marks of the played moves, for review.moves
  refKey: null,    // the position the referee is being asked about
  refStart: 0,     // when the page started asking about refKey (for the elapsed time while computing)
  waitStart: 0,    // when the opponent (or the referee's move) started being waited for
  refereeMoving: false,  // the referee's move was asked for and is being computed
};
const CREDIT = {y: "you", o: "opponent", r: "referee", "-": "nobody"};

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

function query(params) {
  // A query string with commas and colons left as they are: both are legal there, and a move string such as
  // "n4n,f3n" or an opponent "model:x,seed=2" should read in a link as it is typed.
  return new URLSearchParams(params).toString().replace(/%2C/gi, ",").replace(/%3A/gi, ":");
}

const elapsed = (since) => `${((performance.now() - since) / 1000).toFixed(1)} s`;

async function api(path, params) {
  let r;
  try {
    r = await fetch(path + "?" + query(params));
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
  S.by = (q.get("by") || "").replace(/[^yor-]/g, "-");
  return q.get("opponent");
}

function writeURL() {
  const params = {game: S.gameId, opponent: spec(), seat: S.seat, seed: S.seed, referee: S.referee ? "1" : "0",
                  moves: S.moves};
  if (/[yor]/.test(S.by)) params.by = S.by;
  const url = location.pathname + "?" + query(params);
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
  } else if (S.refereeMoving) text = `the referee is choosing a move… ${elapsed(S.waitStart)}`;
  else if (S.thinking) text = `${spec()} is thinking… ${elapsed(S.waitStart)}`;
  else if (humanPlays(p.to_move)) text = S.seat === "both" ? `${playerName(p.to_move)} player to move` : "Your move";
  else text = `${spec()} to move`;
  $("status").textContent = text;
  $("undo").disabled = !p || undoTarget() === null;
  const g = S.games.get(S.gameId);
  $("referee-move").disabled = !p || p.over || !(g && g.referee) || S.thinking || S.refereeMoving ||
    !humanPlays(p.to_move);
}

function creditName(h) {
  // Who made a move of the history: the `by` credit, never the opponent for a move it did not make.
  const c = S.by[h.ply - 1] || "-";
  if (c === "y") return S.seat === "both" ? `you (${colourName(h.player)})` : "you";
  if (c === "o") return spec();
  if (c === "r") return "referee";
  return colourName(h.player);
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

const signed = (v) => (v > 0 ? `+${v}` : `${v}`);

function valueClasses(v) {
  // Colour by the outcome class (win / draw / loss for the mover); "star": the best value within its class;
  // "top": the best value of all (analysis.py computes both).
  return [v.outcome, v.best_in_class ? "star" : "", v.mark === "best" ? "top" : ""].filter(Boolean);
}

function chip(v) {
  const c = el("div", "value-chip");
  if (v) {
    c.textContent = (v.best_in_class ? "★" : "") + signed(v.value);
    c.classList.add(...valueClasses(v));
    c.title = v.text + (v.best_in_class ? " (★ the best score of its outcome)" : "");
    c.dataset.value = v.value;
    c.dataset.outcome = v.outcome;
    c.dataset.star = v.best_in_class ? "1" : "0";
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
  const numbers = el("div", "col-numbers");  // column numbers under the board: the notation of the moves
  for (let c = 0; c < b.cols; c++) numbers.append(el("div", "col-number", b.moves[c]));
  wrap.append(values, cols, numbers);
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
      const tag = el("span", ["cell-value", ...valueClasses(v)].join(" "), v.outcome);
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
        const t = svg("text", {class: ["edge-value", ...valueClasses(v)].join(" "), x: (x(c0) + x(c1)) / 2,
                               y: (y(r0) + y(r1)) / 2, "data-move": e.move, "data-value": v.value,
                               "paint-order": "stroke", stroke: "#fff", "stroke-width": 4},
                      (v.best_in_class ? "★" : "") + signed(v.value));
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
    const who = el("span", "who", creditName(h));
    const credit = S.by[h.ply - 1] || "-";
    who.dataset.credit = CREDIT[credit];
    if (credit === "-") who.title = "loaded from a link (or played by an earlier opponent): who played it is not known";
    li.append(who, el("span", "mv", moveLabel(h.move)));
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
  const meaning = $("referee-meaning");
  list.replaceChildren();
  meaning.textContent = "";
  const r = S.ref && S.ref.moves === S.moves ? S.ref : null;
  panel.dataset.moves = S.moves;
  panel.dataset.status = r ? r.status : "computing";
  if (!r || r.status === "computing") {
    summary.textContent = `computing… ${elapsed(S.refStart)}`;
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
  summary.textContent = `To move: ${mover}. ${r.summary}`;
  meaning.textContent = r.optimal_meaning;
  for (const m of r.values) {
    const li = el("li", valueClasses(m).join(" "), `${m.best_in_class ? "★ " : ""}${moveLabel(m.move)}: ${m.text}`);
    li.dataset.move = m.move;
    li.dataset.value = m.value;
    li.dataset.mark = m.mark;
    li.dataset.outcome = m.outcome;
    li.dataset.star = m.best_in_class ? "1" : "0";
    list.append(li);
  }
}

function refreshReferee() {
  const key = S.referee ? S.gameId + "|" + S.moves : null;
  if (key !== S.refKey) S.refStart = performance.now();
  S.refKey = key;
  renderReferee();
  renderMoves();
  if (!S.referee) return;
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
function setPosition(pos, credit) {
  // `credit`: who made the one move this position adds (y, o or r); none for a position reached by going back.
  const n = pos.plies;
  let by = S.by.slice(0, n).padEnd(n, "-");
  if (credit && n) by = by.slice(0, n - 1) + credit;
  S.by = by;
  S.pos = pos;
  S.moves = pos.moves;
  writeURL();
  renderBoard();
  renderStatus();
  refreshReferee();
}

async function go(moves, play, credit = "y") {
  // Show the position after `moves` (plus the move `play`, made by `credit`), then let the opponent move while
  // it is its turn.
  const gen = ++S.gen;
  S.thinking = false;
  S.refereeMoving = false;
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
  setPosition(r.body, play === undefined ? undefined : credit);
  await opponentMoves(gen);
}

async function opponentMoves(gen) {
  while (gen === S.gen && S.pos && !S.pos.over && !humanPlays(S.pos.to_move)) {
    S.thinking = true;
    S.waitStart = performance.now();
    setBusy(true);
    renderStatus();
    const r = await api("/api/agent", {game: S.gameId, moves: S.moves, opponent: spec(), seed: S.seed});
    if (gen !== S.gen) return;
    S.thinking = false;
    if (r.status !== 200) {
      showError(r.body.error);
      break;
    }
    setPosition(r.body.position, "o");
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

async function refereeMove() {
  // Play the referee's best move for the side to move (the first of several equal ones), credited to it.
  const p = S.pos;
  if (!p || p.over || S.thinking || S.refereeMoving || !humanPlays(p.to_move)) return;
  const gen = S.gen;
  const moves = S.moves;
  S.refereeMoving = true;
  S.waitStart = performance.now();
  setBusy(true);
  renderStatus();
  for (;;) {
    const r = await api("/api/referee", {game: S.gameId, moves});
    if (gen !== S.gen || S.moves !== moves) return;  // the position changed meanwhile: nothing to play
    if (r.status === 202) {
      renderStatus();
      await sleep(150);
      continue;
    }
    S.refereeMoving = false;
    if (r.status !== 200 || r.body.status !== "done" || !(r.body.best_moves || []).length) {
      showError(r.body.error || (r.body.reason ? `No referee: ${r.body.reason}` : "The referee has no move here."));
      setBusy(false);
      renderStatus();
      return;
    }
    S.ref = r.body;
    await go(moves, r.body.best_moves[0], "r");
    return;
  }
}

function tick() {
  // The elapsed time while the referee computes or an opponent thinks, updated between the answers.
  if (S.thinking || S.refereeMoving) renderStatus();
  const panel = $("referee-panel");
  if (S.referee && panel.dataset.status === "computing" && S.refKey) {
    $("referee-summary").textContent = `computing… ${elapsed(S.refStart)}`;
  }
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
    S.by = S.by.replace(/o/g, "-");  // the earlier opponent's moves are not the new one's
    go(S.moves);
  });
  $("opponent-spec").addEventListener("change", (e) => {
    S.spec = e.target.value;
    S.by = S.by.replace(/o/g, "-");
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
  $("referee-move").addEventListener("click", refereeMove);
  setInterval(tick, 200);
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
