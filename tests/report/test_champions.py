"""report/champions.py: which trained agents `boardrl register` files, under which aliases.  Registering and
playing by alias against a real MLflow store: tests/pipeline/test_integration.py."""

from __future__ import annotations

from boardrl.report.champions import alias, champion, picks
from boardrl.report.results import load_results
from report.results_tree import C4, SLOW, TTT, make_results


def test_the_champion_is_judged_against_the_strongest_opponent_all_candidates_met(tmp_path):
    exps = {e.id: e for e in load_results(make_results(tmp_path))}
    # both tic-tac-toe agents met perfect (the stronger): they draw every game there, so the tie goes to the
    # higher optimal-move rate (1.0 against 0.99), as in the headline
    best, opponent = champion([exps[TTT], exps[SLOW]], ["perfect", "random"])
    assert (best.id, opponent) == (SLOW, "perfect")
    # the Connect 4 experiment met random only, so the comparison is against random, not perfect
    assert champion([exps[TTT], exps[C4]], ["perfect", "random"])[1] == "random"
    assert champion([], ["random"]) is None


def test_each_games_headline_agent_is_picked_with_its_kind_and_the_champion_alias(tmp_path):
    got = {(p.game, p.experiment.id, p.seed, p.aliases, p.judged_against)
           for p in picks(load_results(make_results(tmp_path)))}
    assert got == {("tictactoe", SLOW, 0, ("tabular", "champion"), "perfect"),
                   ("connect4", C4, 0, ("tabular", "champion"), "random")}


def test_profiles_other_than_the_default_prefix_their_aliases():
    assert (alias("champion", "default"), alias("champion", None), alias("dqn", "full")) == \
        ("champion", "champion", "full-dqn")
