"""The headline table (report/headline.py): choices, intervals, Markdown, and README's block kept in step.

The fixture is a small results/ tree in the evaluate stage's own shapes (``SeatStats.to_dict`` blocks, per-seed
provenance, the across-seeds summary), with numbers chosen so the choices are known: at tic-tac-toe every agent
draws against ``perfect`` in some games and loses in others, so ``perfect`` is the strongest opponent and the
tabular learner that never loses is the best of its kind; at Connect 4 ``maxmin`` beats both agents more often
than ``mcts:simulations=1000`` beats the one agent that met it.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from boardrl.evaluate.stats import SeatStats
from boardrl.report import headline, load_results, markdown
from boardrl.report.reference_systems import LEARNER_KINDS
from boardrl.report.evaluation import AcrossReading, SeedReading
from boardrl.report.results import Experiment, ReportError, SeedResult
from boardrl.report.studies import StudyResults

ROOT = Path(__file__).resolve().parents[2]
COMMIT = "89abcdef0123456789abcdef0123456789abcdef"
Seat = tuple[int, int, int]  # wins, draws, losses of our agent


# ---------------------------------------------------------------------------------------------- fixture
def opponent_block(first: Seat, second: Seat) -> dict[str, Any]:
    a, b = SeatStats(*first), SeatStats(*second)
    return {"as_first": a.to_dict(), "as_second": b.to_dict(), "combined": (a + b).to_dict(), "mean_length": 7.5}


def spread(values: list[float]) -> dict[str, Any]:
    return {"iqm": sum(values) / len(values), "ci": [min(values), max(values)], "values": values,
            "confidence": 0.95, "method": "interquartile mean, percentile bootstrap over seeds"}


def eval_file(exp_id: str, game: str, learner: str, ladder: dict[str, tuple[Seat, Seat]],
              optimal: tuple[int, int] | None, seeds: tuple[int, ...] = (0,)) -> dict[str, Any]:
    """``results/eval/<id>.json`` of an experiment whose every seed played ``ladder`` alike."""
    blocks = {}
    for k in seeds:
        opt = None if optimal is None else {"rate": optimal[0] / optimal[1], "n": optimal[1], "optimal": optimal[0],
                                            "ci": [0.0, 1.0]}
        blocks[str(k)] = {
            "opponents": {o: opponent_block(*seats) for o, seats in ladder.items()},
            "optimal_move_rate": None if opt is None else opt["rate"], "optimal_move": opt, "uci": None,
            "provenance": {"experiment": exp_id, "game": game, "learner": learner, "seed": k, "profile": "default",
                           "unit": "games", "budget": 10000, "git_commit": COMMIT, "mlflow_run_id": f"run{k}{exp_id}"},
        }
    combined = {o: SeatStats(*first) + SeatStats(*second) for o, (first, second) in ladder.items()}
    outcomes = ("win", "draw", "loss")
    across = {"seeds": list(seeds),
              "opponents": {o: {out: spread([getattr(c, f"{out}_rate")] * len(seeds)) for out in outcomes}
                            for o, c in combined.items()},
              "optimal_move_rate": None if optimal is None else spread([optimal[0] / optimal[1]] * len(seeds))}
    return {"experiment": exp_id, "game": game, "learner": learner, "profile": "default", "unit": "games",
            "budget": 10000, "seeds": blocks, "across_seeds": across}


RANDOM = ((990, 10, 0), (906, 94, 0))
EXPERIMENTS = [
    eval_file("tictactoe_tabular_q", "tictactoe", "tabular_q",
              {"random": RANDOM, "perfect": ((0, 1000, 0), (0, 1000, 0))}, (2000, 2000), seeds=(0, 1)),
    eval_file("tictactoe_seed002_qt_vs_random", "tictactoe", "qt",
              {"random": RANDOM, "maxmin": ((0, 500, 0), (0, 500, 0)), "perfect": ((0, 990, 10), (0, 950, 50))},
              (1900, 2000)),
    eval_file("tictactoe_dqn", "tictactoe", "dqn", {"random": RANDOM, "perfect": ((0, 1000, 0), (0, 990, 10))},
              (1989, 2000)),
    eval_file("tictactoe_td_lambda", "tictactoe", "td_lambda",
              {"random": RANDOM, "perfect": ((0, 1000, 0), (0, 966, 34))}, (1978, 2000)),
    eval_file("tictactoe_td0", "tictactoe", "td0", {"random": RANDOM, "perfect": ((0, 1000, 0), (0, 1000, 0))},
              (1990, 2000)),
    eval_file("tictactoe_alphazero", "tictactoe", "alphazero",
              {"random": RANDOM, "perfect": ((0, 1000, 0), (0, 1000, 0))}, (2000, 2000)),
    eval_file("connect4_dqn", "connect4", "dqn",
              {"random": ((494, 0, 6), (496, 0, 4)), "maxmin": ((0, 0, 500), (0, 0, 500))}, (1615, 2000)),
    eval_file("connect4_alphazero", "connect4", "alphazero",
              {"maxmin": ((0, 72, 28), (0, 0, 100)), "mcts:simulations=1000": ((38, 5, 57), (50, 13, 37))},
              (1879, 2000)),
]


@pytest.fixture
def results(tmp_path: Path) -> Path:
    for data in EXPERIMENTS:
        path = tmp_path / "results" / "eval" / f"{data['experiment']}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data))
    return tmp_path / "results"


@pytest.fixture
def table(results: Path) -> headline.Headline:
    return headline.headline(load_results(results))


def row(h: headline.Headline, game: str) -> headline.GameRow:
    return next(r for r in h.games if r.game == game)


# ---------------------------------------------------------------------------------------------- choices
def test_one_row_per_game_in_order(table):
    assert [r.game for r in table.games] == list(headline.GAMES)
    assert table.profiles == ["default"]


def test_the_strongest_opponent_is_the_one_our_agents_score_least_against(table):
    assert row(table, "tictactoe").opponent == "perfect"
    assert row(table, "connect4").opponent == "maxmin"  # mean score 0.09 against mcts:1000's 0.485
    assert row(table, "conniption").opponent is None  # nothing evaluated


def test_the_best_of_a_kind_scores_highest_then_plays_the_most_optimal_moves(table):
    ttt = row(table, "tictactoe").agents
    assert ttt["tabular"].experiment == "tictactoe_tabular_q"  # never loses; the QT loses 60 games
    assert ttt["dqn"].experiment == "tictactoe_dqn"
    assert ttt["value"].experiment == "tictactoe_td0"  # td0 never loses, td_lambda loses 34 as second
    assert ttt["alphazero"].experiment == "tictactoe_alphazero"
    assert row(table, "connect4").agents["tabular"] is None


def test_figures_are_pooled_over_seeds_per_seat(table):
    a = row(table, "tictactoe").agents["tabular"]
    assert a.seeds == [0, 1] and a.opponent == "perfect"
    assert (a.as_first.games, a.as_first.draws, a.as_second.losses) == (2000, 2000, 0)
    assert (a.optimal_moves.optimal, a.optimal_moves.positions) == (4000, 4000)
    assert [p.mlflow_run_id for p in a.provenance] == ["run0tictactoe_tabular_q", "run1tictactoe_tabular_q"]


def _experiment(data: dict[str, Any]) -> Experiment:
    """The experiment ``load_results`` would read from ``data`` (without writing it)."""
    return Experiment(id=data["experiment"], game=data["game"], learner=data["learner"], profile="default",
                      unit="games", budget=10000, across_seeds=AcrossReading.model_validate(data["across_seeds"]),
                      seeds={int(k): SeedResult(evaluation=SeedReading.model_validate(b))
                             for k, b in data["seeds"].items()})


def test_a_tie_on_the_opponent_is_broken_by_the_optimal_move_rate():
    ladder = {"perfect": ((0, 100, 0), (0, 100, 0))}  # two agents that never lose
    exps = [_experiment(eval_file(i, "tictactoe", "tabular_q", ladder, (k, 100))) for i, k in (("a", 90), ("b", 99))]
    best, opp = headline.best_agent(exps, ["perfect"])
    assert (best.id, opp) == ("b", "perfect")  # "a" comes first: a plain max would keep it


def test_a_kind_that_never_met_the_strongest_opponent_is_judged_by_the_next_one():
    exps = [_experiment(eval_file("x", "connect4", "dqn", {"tactical": ((60, 0, 40), (50, 0, 50))}, None))]
    best, opp = headline.best_agent(exps, ["maxmin", "tactical", "random"])
    assert (best.id, opp) == ("x", "tactical")
    cell = markdown.inline(headline.agent_cell(headline.agent_result(best, opp), "maxmin"), markdown._Links())
    assert cell.startswith("`x` (1 seed) vs `tactical`: first W 60.0% [50.2, 69.1]")


def test_every_learner_has_a_column():
    placed = [name for k in headline.KINDS for name in k.learners]
    assert sorted(placed) == sorted(LEARNER_KINDS) and len(placed) == len(set(placed))
    odd = _experiment(eval_file("odd", "tictactoe", "tabular_q", {"random": RANDOM}, None))
    odd = dataclasses.replace(odd, learner="new_learner")
    with pytest.raises(ReportError, match="learner 'new_learner' of experiment 'odd' is in no column"):
        headline.headline([odd])


def test_reference_figures_are_the_best_system_of_each_kind_against_its_strongest_opponent(table):
    refs = row(table, "tictactoe").references
    by_kind = {}
    for f in refs:
        by_kind.setdefault(f.kind, []).append(f)
    # reference system 002's QT and DQ were also measured against maxmin, which our results rank above random
    assert {(f.seed, f.opponent, f.measure, f.value) for f in by_kind["tabular"]} == {("002", "maxmin", "loss", 0.0)}
    assert by_kind["tabular"][0].system == "QT, trained vs Random"
    assert {(f.seat, f.value) for f in by_kind["alphazero"]} == {("as_first", 0.5), ("as_second", 0.5)}
    conniption = row(table, "conniption").references  # no results: opponents keep the system's own order
    assert {f.seed for f in conniption} == {"004"}


# ---------------------------------------------------------------------------------------------- intervals
@pytest.mark.parametrize("k, n, lo, hi", [  # Newcombe (1998), Statistics in Medicine 17:857, table I, method 3
    (81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611), (1, 29, 0.0061, 0.1718)])
def test_wilson_intervals_match_published_values(k, n, lo, hi):
    s = headline.SeatResult.of(SeatStats(wins=k, draws=0, losses=n - k))
    assert s.win_ci == pytest.approx((lo, hi), abs=5e-5)
    flipped = headline.SeatResult.of(SeatStats(wins=0, draws=n - k, losses=k))
    assert flipped.loss_ci == pytest.approx((lo, hi), abs=5e-5)


# ---------------------------------------------------------------------------------------------- Markdown
def test_markdown_table(table):
    md = headline.render(table)
    lines = md.splitlines()
    assert lines[2] == ("| Game | Strongest opponent | Tabular | DQN | Value learners | AlphaZero | "
                        "Reference systems (published) |")
    ttt = next(line for line in lines if line.startswith("| tictactoe |"))
    assert ("| `tictactoe_tabular_q` (2 seeds): first W 0.0% [0.0, 0.2] L 0.0% [0.0, 0.2]; second W 0.0% [0.0, 0.2] "
            "L 0.0% [0.0, 0.2]; optimal moves 100.0% [99.9, 100.0] |") in ttt
    assert "`tictactoe_td0` (1 seed): first W 0.0% [0.0, 0.4] L 0.0% [0.0, 0.4]" in ttt
    assert "tabular: reference system 002 QT, trained vs Random, against maxmin: combined L 0%" in ttt
    assert "AlphaZero: reference system 003 AlphaZero, against perfect: first score 0.50, second score 0.50" in ttt
    c4 = next(line for line in lines if line.startswith("| connect4 |"))
    assert "| `maxmin` | none evaluated |" in c4
    assert "`connect4_alphazero` (1 seed): first W 0.0% [0.0, 3.7] L 28.0% [20.1, 37.5]; second W 0.0% [0.0, 3.7] " \
           "L 100.0% [96.3, 100.0]; optimal moves 94.0% [92.8, 94.9]" in c4
    assert "| conniption | none evaluated | none evaluated |" in md
    assert "evaluations at git commit(s) 89abcdef01" in md


def seeds_study(name: str, wins: dict[str, dict[str, float]], variation: str = "default",
                profile: str = "default") -> StudyResults:
    """A study that trained seeds 0, 1 and 2 of ``connect4_alphazero`` (``variation``: a variation of no keys, the
    profile's own settings, unless another name) and won ``wins[opponent][seat][seed]``."""
    row = {"experiment": "connect4_alphazero", "variation": variation,
           "seat_wins_per_seed": {opp: {"as_first": {k: f for k, (f, _) in by_seed.items()},
                                        "as_second": {k: s for k, (_, s) in by_seed.items()}}
                                  for opp, by_seed in wins.items()}}
    return StudyResults(name, "", [row], None, {"connect4_alphazero": [0, 1, 2]}, frozenset({"default"}), profile)


def test_a_cell_adds_the_wins_of_the_other_seeds_a_study_trained_with_the_same_settings(table):
    """The default's one-seed connect4_alphazero met ``maxmin``; a study of its settings trained seeds 0 to 2.
    Its cell adds seeds 1 and 2 (seed 0 is the cell's own) against ``maxmin`` only; a seed of the study that did not
    meet ``maxmin``, a study of other settings and a study of another profile add nothing."""
    maxmin = {"0": (0.5, 0.5), "1": (0.94, 0.97), "2": (0.93, 0.955)}
    studies = (seeds_study("c4_seeds", {"maxmin": maxmin, "random": {"1": (1.0, 1.0)}}),
               seeds_study("changed", {"maxmin": maxmin}, variation="more_simulations"),
               seeds_study("full_seeds", {"maxmin": maxmin}, profile="full"),
               seeds_study("one_more", {"maxmin": {"2": (0.1, 0.2)}}))
    c4 = next(line for line in headline.render(table, studies=studies).splitlines()
              if line.startswith("| connect4 |"))
    assert ("optimal moves 94.0% [92.8, 94.9]; seeds 1, 2 in study `c4_seeds`: first W 94.0%, 93.0%; second W "
            "97.0%, 95.5%; seed 2 in study `one_more`: first W 10.0%; second W 20.0% |") in c4
    assert "changed" not in c4 and "full_seeds" not in c4 and "seed 0" not in c4
    assert headline.render(table) != headline.render(table, studies=studies)
    with_dqn = next(line for line in headline.render(table, studies=studies).splitlines()
                    if line.startswith("| tictactoe |"))
    assert "in study" not in with_dqn  # the study trained no seeds of tic-tac-toe's experiments


def test_studies_that_report_the_same_seeds_wins_are_named_together_once(table):
    """Two studies that each trained the profile's own settings hold the same models of seeds 1 and 2, so the
    same wins: the cell gives the figures once and names both; a third with other wins stands apart."""
    maxmin = {"1": (0.94, 0.97), "2": (0.93, 0.955)}
    studies = (seeds_study("c4_seeds", {"maxmin": maxmin}), seeds_study("search", {"maxmin": maxmin}),
               seeds_study("other_machine", {"maxmin": {"1": (0.9, 0.97), "2": (0.93, 0.955)}}))
    c4 = next(line for line in headline.render(table, studies=studies).splitlines()
              if line.startswith("| connect4 |"))
    assert ("; seeds 1, 2 in studies `c4_seeds`, `search`: first W 94.0%, 93.0%; second W 97.0%, 95.5%; "
            "seeds 1, 2 in study `other_machine`: first W 90.0%, 93.0%; second W 97.0%, 95.5% |") in c4
    assert c4.count("first W 94.0%, 93.0%") == 1


def test_the_full_profile_stands_beside_the_default_one_kind_by_kind(table):
    """With the published full profile, README's table has one line per game and kind that either profile
    evaluated: the default's agent, the full's, and the reference systems of the same kind; the column heads link
    to both reports.  Without it, the table is the default's and a line says how to publish the full one."""
    full = table.model_copy(deep=True)
    full.profiles = ["full"]
    ttt = next(r for r in full.games if r.game == "tictactoe")
    ttt.agents["alphazero"] = None
    md = headline.render(table, full)
    lines = md.splitlines()
    assert lines[2] == ("| Game | Kind | Default profile ([report](reports/report.md)) | Full profile ([report]("
                        "published/full/reports/report.md)) | Reference systems (published) |")
    tab = next(line for line in lines if line.startswith("| tictactoe | Tabular |"))
    cell = ("`tictactoe_tabular_q` (2 seeds) vs `perfect`: first W 0.0% [0.0, 0.2] L 0.0% [0.0, 0.2]; second W 0.0% "
            "[0.0, 0.2] L 0.0% [0.0, 0.2]; optimal moves 100.0% [99.9, 100.0]")
    assert tab.count(cell) == 2 and tab.endswith("| tabular: reference system 002 QT, trained vs Random, against "
                                                  "maxmin: combined L 0% |")
    az = next(line for line in lines if line.startswith("| tictactoe | AlphaZero |"))
    assert "| none evaluated | AlphaZero: reference system 003 AlphaZero" in az
    assert not any(line.startswith(("| connect4 | Tabular |", "| connect4 | Value learners |")) for line in lines)
    assert sum(line.startswith("| connect4 |") for line in lines) == 2  # DQN and AlphaZero: what was evaluated
    assert "Params profile `full`" in md and "`published/full/reports/report.md`" in md
    block = headline.block(table, full)
    assert "from docs/headline.json and published/full/docs/headline.json" in block.splitlines()[1]
    alone = headline.render(table)
    assert "| Game | Strongest opponent |" in alone and "not published yet" in alone
    assert "`make repro PROFILE=full`, then `boardrl publish full`" in alone


def test_the_data_round_trips_through_its_file(table, tmp_path):
    path = tmp_path / "headline.json"
    path.write_text(headline.dump(table))
    again = headline.load(path)
    assert again == table and headline.render(again) == headline.render(table)
    assert headline.load(tmp_path / "missing.json") is None
    path.write_text('{"profiles": ["default"], "games": [{"game": "tictactoe"}]}')
    with pytest.raises(ReportError, match="not a headline table"):
        headline.load(path)


def test_no_run_yet_is_said_in_the_block():
    block = headline.block(None)
    assert block.startswith(headline.START) and block.endswith(headline.END)
    assert "No run yet" in block and "docs/headline.json" in block


def test_the_block_replaces_only_what_lies_between_the_markers(table):
    readme = f"# title\n\nbefore\n\n{headline.START}\nold\n{headline.END}\n\nafter\n"
    new = headline.with_block(readme, table)
    assert new.startswith("# title\n\nbefore\n\n") and new.endswith("\n\nafter\n")
    assert headline.current_block(new) == headline.block(table, headline.published_full(), headline.studies_here())
    with pytest.raises(ReportError, match="markers"):
        headline.with_block("no markers here\n", table)
    with pytest.raises(ReportError, match="markers"):
        headline.with_block(readme + headline.START, table)


# ---------------------------------------------------------------------------------------------- the stage
def _report_main():
    """pipeline/report.py's main, loaded from its file under a name of its own (another test may have put a
    different module called ``report`` in sys.modules)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("pipeline_report_stage", ROOT / "pipeline" / "report.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


def test_the_stage_writes_the_data_and_the_readme_block(results, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n\n{headline.START}\n{headline.END}\n\nrest\n")
    data = tmp_path / "docs" / "headline.json"
    main = _report_main()
    main(["--results", str(results), "--out", str(tmp_path / "reports"), "--headline", str(data),
          "--readme", str(readme), "--data-summary", str(tmp_path / "none.json")])
    assert (tmp_path / "reports" / "report.md").is_file()
    table = headline.load(data)
    assert table is not None and row(table, "connect4").opponent == "maxmin"
    assert headline.current_block(readme.read_text()) == headline.block(table, headline.published_full(), headline.studies_here())
    readme.write_text(readme.read_text().replace("maxmin", "edited by hand"))
    main(["--readme-only", "--headline", str(data), "--readme", str(readme)])
    assert headline.current_block(readme.read_text()) == headline.block(table, headline.published_full(), headline.studies_here())


def test_readme_block_is_what_the_committed_data_renders_to():
    """CI has no results/: README's block must equal what docs/headline.json renders to (or say no run yet)."""
    committed = headline.load(ROOT / headline.JSON_PATH)
    shown = headline.current_block((ROOT / "README.md").read_text())
    assert shown == headline.block(committed, headline.published_full(ROOT), headline.studies_here(ROOT)), (
        "README.md's headline block differs from what docs/headline.json renders to; renew it with "
        "`.venv/bin/python pipeline/report.py --readme-only` (never edit the block by hand)")
