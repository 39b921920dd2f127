"""Building and verifying the Connect 4 opening book (``solvers/connect4_book.py``: keys, file, lookups).

Why a module of its own: building and verifying search with ``Connect4Solver`` (``solvers/connect4.py``), which
answers from the book through ``connect4_book.default_book``; while both lived in ``connect4_book.py`` the book
and the solver imported each other (inside functions), an import circle.  This module imports both, and neither
imports it.

Build (``build_book``, ``boardrl book build``), bottom-up:

1. enumerate the distinct canonical unfinished positions of each ply from the root (numpy, level by level;
   each level lists positions in order of first visit from its parents, so neighbours share ancestors);
2. solve every position at ply ``D`` by search, in contiguous chunks of that order (siblings share the
   worker's transposition table; the chunks themselves go in a fixed shuffled order, so the progress bar's
   rate is representative early), on worker processes; every finished chunk is written to a work directory,
   so a killed build resumes where it stopped;
3. plies ``D-1 .. root`` exactly from their children's scores by negamax: a move that completes a four scores
   ``(43 - p) // 2`` at once (as the solver's ``_terminal_score``), any other child scores minus its book
   score, and the position scores the best of them.

Cost (measured on the 2-core machine while other work shared it): the ply-8 searches ran at 4-7 positions/s
with 2 processes (91,295 of them), so a D = 8 build takes 3.5 to 6 hours there.  Chunks are independent, so
the time divides by the number of processes, and a work directory carries over to another machine.  Even with
D = 8, positions with 8 to 11 stones still need searches (of their children at least) that take up to several
seconds: ``benchmarks/connect4_book_timing.py`` measures the referee per ply.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from boardrl.atomic_io import atomic_write_bytes, atomic_write_json, atomic_writer
from boardrl.cache import cache_dir
from boardrl.errors import BoardRLError
from boardrl.solvers.connect4 import Connect4Solver, has_four, move_bit, position_from_columns
from boardrl.solvers.connect4_book import (COL_BITS, DEFAULT_PLIES, FORMAT_VERSION, H1, WIDTH, BookError,
                                           OpeningBook, _sha256_bytes, decode_key, default_path, load_book,
                                           mirror_bits, save_book, solver_fingerprint)

CELLS = 42
#: The 6 real cells of each column (the sentinel bit excluded).
COLUMN_MASKS = [((1 << 6) - 1) << (H1 * c) for c in range(WIDTH)]

CHUNK_SIZE = 256  # ply-D positions solved per chunk (one file in the work directory)
WORKER_TT_LOG2 = 25  # each build worker's transposition table: 2**25 slots = 256 MiB, never cleared (newest wins)


# ---------------------------------------------------------------------------------------------- enumeration
def _has_four(b: np.ndarray) -> np.ndarray:
    """Vectorised ``games.connect4.has_four`` over an int64 array of bitboards."""
    out = np.zeros(b.shape, dtype=bool)
    for s in (1, H1, H1 - 1, H1 + 1):
        m = b & (b >> s)
        out |= (m & (m >> (2 * s))) != 0
    return out


def _moves(mask: np.ndarray) -> np.ndarray:
    """(N, 7) int64: the cell a stone dropped in each column lands on, 0 where the column is full."""
    return np.stack([(mask + (1 << (H1 * c))) & COLUMN_MASKS[c] for c in range(WIDTH)], axis=1)


def _canonical(cur: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each position replaced by its mirror image where that has the smaller key; returns (cur, mask, key)."""
    key = cur + mask
    mkey = mirror_bits(key)
    flip = mkey < key
    cur = np.where(flip, mirror_bits(cur), cur)
    mask = np.where(flip, mirror_bits(mask), mask)
    return cur, mask, np.minimum(key, mkey)


def _first_visit(key: np.ndarray) -> np.ndarray:
    """Indices of the distinct values of ``key``, each at its first occurrence, in order of occurrence."""
    _, first = np.unique(key, return_index=True)
    return np.sort(first)


@dataclass
class Level:
    """The distinct unfinished positions of one ply (canonical when enumerated with mirroring)."""

    plies: int
    cur: np.ndarray
    mask: np.ndarray
    finished: int = 0  # distinct finished positions at this ply (a four was just completed), not listed

    def __len__(self) -> int:
        return int(self.cur.shape[0])

    @property
    def keys(self) -> np.ndarray:
        return self.cur + self.mask


def _root(root: Sequence[int]) -> tuple[int, int, int]:
    """The position after ``root`` (0-based columns); the game must still be on there."""
    cur = mask = 0
    position_from_columns(list(root))  # one-line errors for a bad column or a full one
    for i, col in enumerate(root):
        mv = int(move_bit(mask, int(col)))
        if has_four(cur | mv):
            raise BoardRLError(f"connect4 book: the root's move {i + 1} ends the game")
        cur, mask = cur ^ mask, mask | mv
    return cur, mask, len(root)


def enumerate_levels(plies: int, root: Sequence[int] = (), mirror: bool = True) -> list[Level]:
    """The distinct unfinished positions after ``len(root) .. plies`` plies, one ``Level`` each.

    From the position after ``root`` (column indices, 0-based), every legal move of every unfinished position;
    a move that completes a four ends the game (counted in ``finished``, not listed).  With ``mirror`` each
    position is replaced by its canonical mirror image before duplicates are dropped.
    """
    cur0, mask0, p0 = _root(root)
    if plies < p0:
        raise BoardRLError(f"connect4 book: plies={plies} is below the root's {p0} stones")
    cur, mask = np.array([cur0], dtype=np.int64), np.array([mask0], dtype=np.int64)
    if mirror:
        cur, mask, _ = _canonical(cur, mask)
    levels = [Level(p0, cur, mask)]
    for p in range(p0 + 1, plies + 1):
        mv = _moves(mask)
        legal = mv != 0
        child_cur = np.broadcast_to((cur ^ mask)[:, None], mv.shape)[legal]
        child_mask = (mask[:, None] | mv)[legal]
        win = _has_four((cur[:, None] | mv)[legal])
        finished = int(np.unique(child_cur[win] + child_mask[win]).size)
        if mirror:
            finished = int(np.unique(_canonical(child_cur[win], child_mask[win])[2]).size)
        cur, mask = child_cur[~win], child_mask[~win]
        key = cur + mask
        if mirror:
            cur, mask, key = _canonical(cur, mask)
        keep = _first_visit(key)
        cur, mask = cur[keep], mask[keep]
        levels.append(Level(p, cur, mask, finished))
    return levels


def count_positions(plies: int) -> list[int]:
    """Distinct positions after exactly k plies, k = 0..plies, finished games included (OEIS A212693)."""
    return [len(lv) + lv.finished for lv in enumerate_levels(plies, mirror=False)]


# ---------------------------------------------------------------------------------------------- build
_WORKER_SOLVER = None


def _worker_solver():
    global _WORKER_SOLVER
    if _WORKER_SOLVER is None:
        _WORKER_SOLVER = Connect4Solver(tt_log2=WORKER_TT_LOG2, max_fill=2.0, book=False)
    return _WORKER_SOLVER


def solve_chunk(args: tuple[int, np.ndarray, np.ndarray, int]) -> tuple[int, np.ndarray]:
    """Exact scores of one chunk of positions (a fresh search, no book); runs in a worker process."""
    index, cur, mask, plies = args
    solver = _worker_solver()
    out = np.array([solver.score(int(c), int(m), plies) for c, m in zip(cur, mask)], dtype=np.int8)
    return index, out


def default_work_dir(out: Path) -> Path:
    """``<cache>/<book name>.work``, the cache being ``$BOARDRL_CACHE`` or the checkout's ``cache/`` (boardrl.cache)."""
    return cache_dir() / f"{Path(out).stem}.work"


def _chunk_file(work: Path, index: int) -> Path:
    return work / f"chunk-{index:05d}.npy"


def _prepare_work_dir(work: Path, header: dict[str, Any], log: Callable[[str], None]) -> None:
    """Keep the chunks of an earlier run of the same build; start afresh when the header differs."""
    hpath = work / "build.json"
    if hpath.is_file():
        try:
            same = json.loads(hpath.read_text()) == header
        except ValueError:
            same = False
        if same:
            return
        log(f"book: {work} holds another build's chunks; starting afresh")
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    atomic_write_json(hpath, header)


def _load_chunk(path: Path, size: int) -> np.ndarray | None:
    try:
        arr = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None
    return arr if arr.dtype == np.int8 and arr.shape == (size,) else None


def solve_leaves(level: Level, work: Path, processes: int = 2, chunk_size: int = CHUNK_SIZE,
                 progress: bool = True, stop_after: int | None = None,
                 on_chunk: Callable[[], None] | None = None) -> np.ndarray | None:
    """Scores of every position of ``level`` by search, resumable through the chunk files in ``work``.

    Chunks are contiguous runs of the level's order (siblings together, so they share the transposition table)
    taken in a fixed shuffled order, so that the progress bar's rate is representative from the start (the
    cost per position varies tenfold between regions of the order).  Returns None when ``stop_after`` new
    chunks were solved before the end (a deliberate stop, for tests).  ``on_chunk`` runs after each chunk file
    is written.
    """
    n = len(level)
    bounds = [(s, min(s + chunk_size, n)) for s in range(0, n, chunk_size)]
    scores = np.zeros(n, dtype=np.int8)
    todo = []
    for i in np.random.default_rng(0).permutation(len(bounds)).tolist():
        s, e = bounds[i]
        got = _load_chunk(_chunk_file(work, i), e - s)
        if got is None:
            todo.append(i)
        else:
            scores[s:e] = got
    done_positions = n - sum(bounds[i][1] - bounds[i][0] for i in todo)
    from tqdm import tqdm

    bar = tqdm(total=n, initial=done_positions, unit="pos", desc=f"book: ply {level.plies}", disable=not progress,
               smoothing=0, dynamic_ncols=True)
    tasks = [(i, level.cur[s:e], level.mask[s:e], level.plies) for i in todo for s, e in [bounds[i]]]
    solved = 0

    def record(i: int, out: np.ndarray) -> None:
        s, e = bounds[i]
        scores[s:e] = out
        with atomic_writer(_chunk_file(work, i)) as fh:
            np.save(fh, out, allow_pickle=False)
        bar.update(e - s)
        if on_chunk is not None:
            on_chunk()

    try:
        if processes <= 1 or len(tasks) <= 1:
            for t in tasks:
                if stop_after is not None and solved >= stop_after:
                    return None
                record(*solve_chunk(t))
                solved += 1
        else:
            import multiprocessing as mp

            with mp.get_context("spawn").Pool(processes) as pool:
                for i, out in pool.imap_unordered(solve_chunk, tasks, chunksize=1):
                    if stop_after is not None and solved >= stop_after:
                        pool.terminate()
                        return None
                    record(i, out)
                    solved += 1
    finally:
        bar.close()
    return scores


def back_up(levels: list[Level], leaf_scores: np.ndarray) -> list[np.ndarray]:
    """Scores of every level, the last one given, the others by negamax over their children's scores."""
    out: list[np.ndarray] = [np.asarray(leaf_scores, dtype=np.int8)]
    below = levels[-1]
    order = np.argsort(below.keys)
    below_keys, below_scores = below.keys[order], out[0][order]
    for lv in reversed(levels[:-1]):
        cur, mask, p = lv.cur, lv.mask, lv.plies
        mv = _moves(mask)
        legal = mv != 0
        win = _has_four(cur[:, None] | mv) & legal
        ckey = _canonical(np.broadcast_to((cur ^ mask)[:, None], mv.shape), mask[:, None] | mv)[2]
        pos = np.searchsorted(below_keys, ckey)
        pos = np.minimum(pos, below_keys.shape[0] - 1)
        child = legal & ~win
        if not np.all(below_keys[pos][child] == ckey[child]):
            raise BoardRLError(f"connect4 book: a child of a ply-{p} position is missing from ply {p + 1}")
        vals = np.where(child, -below_scores[pos].astype(np.int64), -100)
        best = vals.max(axis=1)
        best = np.where(win.any(axis=1), (CELLS + 1 - p) // 2, best)
        scores = best.astype(np.int8)
        out.append(scores)
        order = np.argsort(lv.keys)
        below_keys, below_scores = lv.keys[order], scores[order]
    return out[::-1]


def assemble(levels: list[Level], scores: list[np.ndarray], plies: int) -> OpeningBook:
    keys = np.concatenate([lv.keys for lv in levels]).astype(np.uint64)
    vals = np.concatenate(scores)
    order = np.argsort(keys)
    return OpeningBook(plies, keys[order], vals[order].astype(np.int8))


def build_book(plies: int = DEFAULT_PLIES, out: str | os.PathLike | None = None, processes: int = 2,
               work_dir: str | os.PathLike | None = None, root: Sequence[int] = (), chunk_size: int = CHUNK_SIZE,
               progress: bool = True, stop_after: int | None = None, keep_work: bool = False,
               log: Callable[[str], None] | None = None) -> dict[str, Any] | None:
    """Build the book of every unfinished position with ``len(root)..plies`` stones and write it to ``out``.

    Resumable: ply-``plies`` scores go chunk by chunk to ``work_dir`` (default: ``default_work_dir``), which a
    later call with the same arguments picks up; the directory is removed once the book is written.  Returns
    the metadata written beside the book, or None when stopped early by ``stop_after``.
    """
    log = log or (lambda msg: None)
    if not 0 <= plies < CELLS:
        raise BoardRLError(f"connect4 book: plies={plies} is out of range; choose 0..41")
    out = Path(out) if out is not None else default_path(plies)
    work = Path(work_dir) if work_dir is not None else default_work_dir(out)
    t0 = time.perf_counter()
    levels = enumerate_levels(plies, root)
    leaves = levels[-1]
    header = {"format": FORMAT_VERSION, "plies": plies, "root": [int(c) for c in root], "chunk_size": chunk_size,
              "positions": len(leaves), "keys_sha256": _sha256_bytes(leaves.keys.tobytes())}
    _prepare_work_dir(work, header, log)
    prior = _read_elapsed(work)
    log(f"book: {sum(len(lv) for lv in levels):,} positions up to ply {plies} (mirror pairs once), "
        f"{len(leaves):,} at ply {plies} to search on {processes} process(es); work directory {work}")

    def elapsed() -> None:  # kept after every chunk, so that a killed build still counts its time
        _write_elapsed(work, prior + time.perf_counter() - t0)

    try:
        leaf_scores = solve_leaves(leaves, work, processes, chunk_size, progress, stop_after, elapsed)
    finally:
        elapsed()
    if leaf_scores is None:
        return None
    book = assemble(levels, back_up(levels, leaf_scores), plies)
    seconds = prior + time.perf_counter() - t0
    meta = save_book(book, out, build_seconds=round(seconds, 1), processes=processes,
                     root="".join(str(c + 1) for c in root),
                     solver=f"solvers/connect4.py sha256 {solver_fingerprint()}")
    if not keep_work:
        shutil.rmtree(work, ignore_errors=True)
    log(f"book: {meta['count']:,} entries, {meta['bytes']:,} bytes, {seconds:.0f} s -> {out}")
    return meta


def _read_elapsed(work: Path) -> float:
    try:
        return float((work / "elapsed").read_text())
    except (OSError, ValueError):
        return 0.0


def _write_elapsed(work: Path, seconds: float) -> None:
    if work.is_dir():
        atomic_write_bytes(work / "elapsed", f"{seconds:.1f}\n".encode())


# ---------------------------------------------------------------------------------------------- verify
def verify_book(path: str | os.PathLike | None = None, sample: int = 30, seed: int = 0,
                min_plies: int | None = None, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Check the checksum, then re-solve ``sample`` random entries with at least ``min_plies`` stones (default:
    the book's D - 1, whose searches take about a second; shallower ones take minutes) by a fresh search and
    compare; ``BookError`` on the first disagreement."""
    log = log or (lambda msg: None)
    book = load_book(path if path is not None else default_path())
    plies_of = _plies_of_keys(book.keys)
    if min_plies is None:
        min_plies = max(book.plies - 1, 0)
    candidates = np.nonzero(plies_of >= min_plies)[0]
    rng = np.random.default_rng(seed)
    pick = rng.choice(candidates, size=min(sample, candidates.size), replace=False)
    solver = Connect4Solver(book=False)
    t0 = time.perf_counter()
    for i in pick:
        cur, mask, p = decode_key(int(book.keys[i]))
        fresh = solver.score(cur, mask, p)
        if fresh != int(book.scores[i]):
            raise BookError(f"connect4 book {book.path}: entry {int(book.keys[i]):#x} (ply {p}) holds "
                            f"{int(book.scores[i])}, a fresh search gives {fresh}")
    seconds = time.perf_counter() - t0
    log(f"book: checksum ok, {len(pick)} sampled entries agree with a fresh search ({seconds:.1f} s)")
    return {"path": str(book.path), "count": len(book), "plies": book.plies, "checked": int(len(pick)),
            "min_plies": int(min_plies), "seconds": round(seconds, 2)}


def _plies_of_keys(keys: np.ndarray) -> np.ndarray:
    """Stones of each key's position: per column, the height is bit_length(v + 1) - 1."""
    height = np.array([(v + 1).bit_length() - 1 for v in range(1 << H1)], dtype=np.int64)
    k = keys.astype(np.int64)
    return sum(height[(k >> (H1 * c)) & COL_BITS] for c in range(WIDTH))


__all__ = [
    "Level", "back_up", "build_book", "count_positions", "enumerate_levels", "verify_book",
]
