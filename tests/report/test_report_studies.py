"""The report's "Studies" section, from studies/<name>.yaml and what `boardrl study <name>` last wrote beside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from boardrl.experiments.study_freshness import Freshness
from boardrl.report import ReportError, build_report
from boardrl.report.studies import StudyResults, as_profile
from report.results_tree import make_results

STUDY = """\
description: TD(0) with a constant or a falling learning rate (`lr_end`).
experiments: [tictactoe_td0]
variations:
  constant: {experiments.tictactoe_td0.params.lr_end: null}
  falling: {experiments.tictactoe_td0.params.lr_end: 0.0001}
"""

ROWS = [{"experiment": "tictactoe_td0", "variation": variation, "dvc_experiment": f"lr-{variation}",
         "rev": rev * 40, "seeds": 5, "budget": 10000, "train_seconds": seconds, "optimal_move_rate": rate,
         "exact_vs_perfect": None, "opponents": {"random": {"win": win, "loss": 0.0}}}
        for variation, rev, seconds, rate, win in [("constant", "a", [30.0, 40.0, 35.0], 0.9992, 0.886),
                                                   ("falling", "b", [31.0], 0.9997, 0.91)]]


def project_with_studies(tmp: Path, results: bool = True) -> Path:
    """A results tree plus studies/: ``lr`` run (results.json and its figure), ``other`` not run."""
    results_dir = make_results(tmp)
    studies = tmp / "studies"
    studies.mkdir()
    (studies / "lr.yaml").write_text(STUDY)
    (studies / "other.yaml").write_text(STUDY.replace("TD(0) with", "Another look at"))
    if results:
        (studies / "lr").mkdir()
        (studies / "lr" / "results.json").write_text(json.dumps({"study": "lr", "rows": ROWS}))
        (studies / "lr" / "results.png").write_bytes(b"\x89PNG study figure")
    return results_dir


def studies_section(md: str) -> str:
    return md.split("\n## Studies\n", 1)[1].split("\n## ", 1)[0]


def test_a_run_study_shows_its_table_figure_and_command_and_one_not_run_is_named(tmp_path):
    out = tmp_path / "reports"
    build_report(project_with_studies(tmp_path), out)
    section = studies_section((out / "report.md").read_text())
    assert "### lr" in section and "`boardrl study lr`" in section
    assert "a falling learning rate (`lr_end`). Rerun:" in section
    rows = [line for line in section.splitlines() if line.startswith("| `tictactoe_td0`")]
    assert len(rows) == 2
    assert "| constant | `lr-constant` | aaaaaaa | 5 | 10000 | 35 | 0.999 | 0.886 / 0.000 |" in rows[0]
    assert "| falling | `lr-falling` | bbbbbbb | 5 | 10000 | 31 | 1.000 | 0.910 / 0.000 |" in rows[1]
    assert (out / "figures" / "study_lr.png").read_bytes() == b"\x89PNG study figure"
    assert "figures/study_lr.png" in section
    assert "### Not run yet" in section and "`boardrl study other`: Another look at" in section
    assert "Studies" in (out / "index.html").read_text()


def test_a_damaged_results_file_is_one_error_naming_it(tmp_path):
    results = project_with_studies(tmp_path)
    (tmp_path / "studies" / "lr" / "results.json").write_text("{not json")
    with pytest.raises(ReportError, match=r"studies/lr/results.json: not a study's results"):
        build_report(results, tmp_path / "reports")
    assert not (tmp_path / "reports").exists()


def test_a_project_without_studies_has_no_section(tmp_path):
    out = tmp_path / "reports"
    build_report(make_results(tmp_path), out)
    assert "## Studies" not in (out / "report.md").read_text()


def test_a_study_whose_rows_ran_with_changed_code_says_so_below_its_table(tmp_path, monkeypatch):
    """The table still shows the rows (they are what ran), and the reader learns which are not this commit's."""
    monkeypatch.setattr("boardrl.report.studies.freshness", lambda root, study: Freshness(stale=("falling",)))
    out = tmp_path / "reports"
    build_report(project_with_studies(tmp_path), out)
    section = studies_section((out / "report.md").read_text())
    assert len([line for line in section.splitlines() if line.startswith("| `tictactoe_td0`")]) == 2
    assert "Not this commit's results: the rows of `falling` ran with params, code, data or stage files" in section
    assert "`studies/lr/results.json`" in section and "`boardrl study lr` reruns them." in section


def test_a_study_that_could_not_be_checked_says_why(tmp_path):
    """This results tree has no params.yaml: the variations' params cannot be made, so nothing is claimed."""
    out = tmp_path / "reports"
    build_report(project_with_studies(tmp_path), out)
    section = studies_section((out / "report.md").read_text())
    assert "Whether these rows still hold at this commit was not checked: params.yaml: cannot read params.yaml" in section
    assert str(tmp_path) not in section


def test_rows_trained_by_changed_code_are_no_more_seeds_of_todays_experiment():
    row = {"experiment": "tictactoe_td0", "variation": "default",
           "seat_wins_per_seed": {"random": {"as_first": {"1": 0.9}, "as_second": {"1": 0.8}}}}
    def study(fresh: Freshness) -> StudyResults:
        return StudyResults("seeds", "", [row], None, {"tictactoe_td0": [1]}, frozenset({"default"}), fresh=fresh)
    assert study(Freshness()).more_seeds("tictactoe_td0") == [1]
    assert study(Freshness()).seed_wins("tictactoe_td0", "random") == {1: (0.9, 0.8)}
    assert study(Freshness(stale=("default",))).more_seeds("tictactoe_td0") == []
    assert study(Freshness(stale=("default",))).seed_wins("tictactoe_td0", "random") == {}


def test_a_variation_of_no_keys_is_the_profiles_experiment_only_when_common_sets_nothing_but_seeds():
    variations = {"default": {}, "longer": {"experiments.a.params.games": 2}}
    assert as_profile(["a"], {"experiments.a.seeds": [1, 2]}, variations) == {"default"}
    # alphazero_search's way: every variation plays with other settings, so none is the profile's experiment
    assert as_profile(["a"], {"experiments.a.seeds": [1, 2], "experiments.a.params.eval_simulations": 100},
                      variations) == frozenset()
    assert as_profile(["a"], {"experiments.b.seeds": [1]}, variations) == frozenset()  # b is not compared
    assert as_profile(["a"], {}, {"longer": {"experiments.a.params.games": 2}}) == frozenset()


def test_the_shipped_alphazero_search_adds_no_seeds_to_the_default_connect4_alphazero():
    from boardrl.report.studies import load_studies

    root = Path(__file__).resolve().parents[2]
    studies = {s.name: s for s in load_studies(root)}
    assert studies["alphazero_search"].more_seeds("connect4_alphazero") == []
    assert studies["alphazero_search"].as_params == frozenset()
    assert studies["connect4_alphazero_seeds"].as_params == {"default"}
