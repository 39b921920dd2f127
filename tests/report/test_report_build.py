"""The report stage on a small synthetic results/ tree in the layout the train and evaluate stages write.

The report is an index (report.md / index.html) and one page per game (<game>.md / <game>.html).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import matplotlib.image
import pytest

from boardrl.report import ReportError, build_report
from boardrl.report.build import REFERENCE_TITLE
from boardrl.report.comparison import REFERENCE_TABLE_HEADER, protocol_note
from boardrl.report.reference_systems import LEARNER_KINDS, REFERENCE_NUMBERS, SYSTEMS
from report.results_tree import (BASELINE, C4, COMMIT, DAB, SLOW, TTT, TTT_WINS, dab_eval, make_results, run_id,
                                 ttt_eval, write_json, write_train)

ROOT = Path(__file__).resolve().parents[2]
GAMES = ("connect4", "dots_and_boxes_2x2", "tictactoe")  # the synthetic tree's, in the report's order
N_FILES = 16  # report.md, index.html, a .md and an .html per game, and 8 figures


@pytest.fixture
def results(tmp_path) -> Path:
    return make_results(tmp_path)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    """One report built from the synthetic tree (with a data summary) for the read-only checks."""
    tmp = tmp_path_factory.mktemp("built")
    results = make_results(tmp)
    summary = tmp / "summary.json"
    summary.write_text(json.dumps({"rows": 67557, "classes": {"win": 44473, "loss": 16635, "draw": 6449}}))
    out = tmp / "reports"
    build_report(results, out, ui="http://127.0.0.1:5000", data_summary=summary)
    return results, out


@pytest.fixture(scope="module")
def md(built) -> str:
    """The index page's Markdown."""
    return (built[1] / "report.md").read_text()


@pytest.fixture(scope="module")
def ttt(built) -> str:
    """The tic-tac-toe page's Markdown."""
    return (built[1] / "tictactoe.md").read_text()


def run_link(run: str) -> str:
    return f"<http://127.0.0.1:5000/#/runs/{run}>"


def link_of(md: str, shown: str) -> str:
    """The definition line of the reference link that ``[shown][rK]`` uses (its first occurrence)."""
    m = re.search(re.escape(f"[{shown}][") + r"(r\d+)\]", md)
    assert m, f"{shown!r} is not a link"
    return next(ln for ln in md.splitlines() if ln.startswith(f"[{m.group(1)}]: "))


def links_in(md: str, line: str) -> list[str]:
    """The definition lines of every reference link in ``line``, in order."""
    defs = dict(re.findall(r"^\[(r\d+)\]: (.*)$", md, re.M))
    return [defs[ref] for ref in re.findall(r"\]\[(r\d+)\]", line)]


def section(md: str, exp_id: str) -> str:
    """The Markdown of one experiment's section (up to the next level-2 heading)."""
    return md.split(f"\n## {exp_id}\n", 1)[1].split("\n## ", 1)[0]


def unlinked(line: str) -> str:
    """A Markdown line with reference links reduced to their text."""
    return re.sub(r"\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\[r\d+\]", r"\1", line)


def test_report_files_exist_and_figures_are_png(built):
    _, out = built
    names = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert names == {
        "report.md", "index.html", *(f"{g}.{ext}" for g in GAMES for ext in ("md", "html")),
        f"figures/curve_{TTT}.png", f"figures/curve_{SLOW}.png",
        f"figures/curve_{DAB}.png", f"figures/wdl_{TTT}.png", f"figures/wdl_{SLOW}.png", f"figures/wdl_{C4}.png",
        f"figures/uci_{C4}.png", "figures/optimal_move_rates_tictactoe.png",
    }
    md = "".join(p.read_text() for p in out.glob("*.md"))
    for p in out.glob("figures/*.png"):
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        img = matplotlib.image.imread(p)
        assert img.ndim == 3 and img.shape[0] > 200 and img.shape[1] > 300
        assert img[..., :3].std() > 0.05  # something was drawn
    for name in (n for n in names if n.startswith("figures/")):
        assert f"]({name})" in md  # every figure is shown in the report


def test_profile_and_title_lines(md, ttt):
    assert md.startswith("# boardrl: results\n\nParams profile: `default` (every experiment).\n\n"
                         f"Every run at git commit `{COMMIT[:10]}`.\n")
    assert (f"`{TTT}`: tabular_q on tictactoe, 200,000 games of training per seed, seeds 0, 1, 2, profile "
            "`default`.") in section(ttt, TTT)
    assert f"`{SLOW}`: tabular_q on tictactoe, 20,000 games of training per seed, seed 0, profile" in ttt


def test_two_experiments_of_one_game_and_learner_coexist(md, ttt):
    rows = [unlinked(ln) for ln in md.splitlines() if ln.startswith(f"| [`{TTT}") or ln.startswith(f"| [`{SLOW}")]
    assert f"| `{TTT}` | tictactoe | tabular_q | 200,000 games | seeds 0, 1, 2 | all |" in rows
    assert f"| `{SLOW}` | tictactoe | tabular_q | 20,000 games | seed 0 | all |" in rows
    assert f"\n## {TTT}\n" in ttt and f"\n## {SLOW}\n" in ttt
    assert "| 90.0% [89.0, 91.0] |" in unlinked(section(ttt, SLOW))  # SLOW's own numbers in its own section
    assert "90.0%" not in section(ttt, TTT)


def test_experiment_ids_link_to_their_sections_on_their_game_pages(md):
    table = md.split("\n## Experiments\n", 1)[1].split("\n## ", 1)[0]
    assert link_of(table + md, f"`{TTT}`").split(" ")[1] == f"<tictactoe.md#{TTT}>"
    assert link_of(md, f"`{C4}`").split(" ")[1] == f"<connect4.md#{C4}>"
    assert link_of(md, "dots_and_boxes_2x2").split(" ")[1] == "<dots_and_boxes_2x2.md>"  # the game: its page
    ids = {TTT, SLOW, DAB, C4}
    for exp_id in ids:  # wherever the index names an experiment of the results, the name is a link
        shown = [m.start() for m in re.finditer(re.escape(f"`{exp_id}`"), md)]
        assert shown and all(md[i - 1] == "[" and md[i + len(exp_id) + 2:].startswith("][r") for i in shown), exp_id
    assert "`tictactoe_seed000_exp03`: not run yet" in md  # an id without results has no section to link to


def test_contents_link_every_section_and_every_game_page(md):
    head, rest = md.split("\n## Contents\n\n", 1)
    assert "Every run at git commit" in head and "\n## " not in head  # the contents come before any section
    items = rest.split("\n\n", 1)[0].splitlines()
    sections = re.findall(r"^## (.*)$", rest, re.M)
    assert [unlinked(i)[2:].split(":")[0] for i in items] == [s.split(":")[0] for s in sections]
    assert sections[:4] == ["Headline", "Targets", "Experiments", REFERENCE_TITLE]
    assert unlinked(items[2]) == ("- Experiments: one page per game: connect4 (1), dots_and_boxes_2x2 (1), "
                                  "tictactoe (2)")
    assert [d.split(" ")[0] for d in links_in(md, items[2])] == [
        "<#experiments>", "<connect4.md>", "<dots_and_boxes_2x2.md>", "<tictactoe.md>"]


def test_a_game_page_has_its_contents_and_links_back_to_the_index(ttt):
    head, rest = ttt.split("\n## Contents\n\n", 1)
    assert head.startswith("# boardrl results: tictactoe\n") and link_of(ttt, "index").split(" ")[1] == "<report.md>"
    items = [unlinked(i) for i in rest.split("\n\n", 1)[0].splitlines()]
    assert items == [f"- {TTT}", f"- {SLOW}", "- Optimal-move rates", "- Provenance"]


def _slugs(md: str) -> set[str]:
    """GitHub's anchors of a Markdown page's headings (lower case, punctuation but - and _ dropped, spaces as
    -, a repeated anchor numbered -1, -2, ...)."""
    seen: dict[str, int] = {}
    out = set()
    for heading in re.findall(r"^#+ (.*)$", md, re.M):
        base = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def test_every_link_inside_the_report_lands_on_a_heading(built):
    """Markdown: a page of the report and one of its GitHub heading anchors; HTML: a page and an element id."""
    _, out = built
    checked = 0
    for page in out.glob("*.md"):
        for target in re.findall(r"^\[r\d+\]: <([^>]*)>", page.read_text(), re.M):
            if target.startswith("http"):
                continue
            name, _, anchor = target.partition("#")
            dest = out / name if name else page
            assert dest.is_file(), (page.name, target)
            assert not anchor or anchor in _slugs(dest.read_text()), (page.name, target)
            checked += 1
    for page in out.glob("*.html"):
        for target in re.findall(r'href="([^"]*)"', page.read_text()):
            if target.startswith("http"):
                continue
            name, _, anchor = target.partition("#")
            dest = out / name if name else page
            assert dest.is_file(), (page.name, target)
            assert not anchor or f' id="{anchor}"' in dest.read_text(), (page.name, target)
            checked += 1
    assert checked > 50


def test_three_seeds_show_the_iqm_interval_and_each_seed(ttt):
    md = ttt
    sec = section(md, TTT)
    assert "| Opponent | Measure | IQM [95% interval] | Seed 0 | Seed 1 | Seed 2 |" in sec
    win = next(ln for ln in sec.splitlines() if ln.startswith("| random | win |"))
    assert unlinked(win) == "| random | win | 98.6% [97.0, 99.0] | 98.8% | 97.0% | 99.0% |"
    targets = [d.split(" ")[0] for d in links_in(md, win)]  # each seed's value links to its evaluate run
    assert targets == [run_link(run_id("eval", TTT, k)) for k in TTT_WINS]
    assert unlinked(next(ln for ln in sec.splitlines() if "optimal-move rate" in ln)).startswith(
        "| - | optimal-move rate | 99.0% [98.0, 100.0] | 100.0% | 99.0% | 98.0% |")
    assert "interquartile mean, percentile bootstrap over seeds, 95% interval" in sec
    assert "one line per seed" in sec


def test_one_seed_has_no_across_seeds_summary(ttt):
    """One seed's "IQM" is its own value: the section shows it once, in the per-seed table."""
    sec = section(ttt, SLOW)
    assert "### Across seeds" not in sec and "one seed" not in sec and "Over 1 seed" not in sec
    assert "| 0 | random | combined | 90.0% [89.0, 91.0] |" in unlinked(sec)
    assert "### Across seeds" in section(ttt, TTT)


def test_a_statistic_missing_across_seeds_reads_n_a(results, tmp_path):
    path = results / "eval" / f"{TTT}.json"
    data = json.loads(path.read_text())
    data["across_seeds"]["opponents"]["perfect"]["win"] = None  # what evaluate writes when a seed lacks the number
    path.write_text(json.dumps(data))
    build_report(results, tmp_path / "reports")
    sec = section((tmp_path / "reports" / "tictactoe.md").read_text(), TTT)
    assert "| perfect | win | n/a | n/a | n/a | n/a |" in sec


def test_markdown_holds_the_numbers_with_their_provenance(built, md, ttt):
    # seed 0's win rate vs random with its Wilson interval, linked to seed 0's evaluate run, the commit in the title
    assert link_of(ttt, "98.8% [97.8, 99.8]").endswith(
        f"{run_link(run_id('eval', TTT, 0))} \"MLflow run {run_id('eval', TTT, 0)}, git commit {COMMIT}\"")
    assert run_link(run_id("eval", TTT, 1)) in link_of(ttt, "97.0% [96.0, 98.0]")
    dab, c4 = ((built[1] / f"{g}.md").read_text() for g in ("dots_and_boxes_2x2", "connect4"))
    assert run_link(run_id("train", DAB, 0)) in link_of(dab, "50,000 games")  # training budget: the train run
    assert "| 12.5 s |" in ttt
    sec = section(ttt, TTT)
    assert "seed 1: [99.0% [98.8, 99.2]]" in sec and "on 2,000 positions" in sec
    assert "61.2% [60.2, 62.2]" in c4  # UCI protocol of reference system 000, win positions
    assert "Reference system 000's protocol: our agent moves first" in c4
    assert "Not evaluated yet" in section(dab, DAB)  # dots and boxes has a curve only
    assert "No learning curve yet" in section(c4, C4)
    assert "Where we deliberately differ from the reference systems" in md and "42nd piece" in md
    assert "- Reference system 000, `learn/tabular_q.py`: " in md
    assert "- All reference systems, `evaluate/match.py`: " in md


def shown_text(md: str) -> str:
    """A Markdown page without its reference-link definitions (which hold the links' tooltips)."""
    return "\n".join(ln for ln in md.splitlines() if not re.match(r"\[r\d+\]: ", ln))


def test_the_commit_is_said_once(built, md):
    """In the index's header; a game page says it in its header too, and no provenance cell repeats it (a number's
    tooltip still names it)."""
    assert shown_text(md).count(COMMIT[:10]) == 1 and f"Every run at git commit `{COMMIT[:10]}`." in md
    for game in GAMES:
        page = (built[1] / f"{game}.md").read_text()
        assert shown_text(page).count(COMMIT[:10]) == 1 and "· commit" not in page, game
    assert f"git commit {COMMIT}\"" in (built[1] / "tictactoe.md").read_text()


def test_a_run_at_another_commit_names_its_commit_in_its_row(results, tmp_path):
    path = results / "eval" / f"{TTT}.json"
    data = json.loads(path.read_text())
    data["seeds"]["1"]["provenance"]["git_commit"] = "fedcba9876" * 4
    write_json(path, data)
    build_report(results, tmp_path / "reports")
    md, ttt = ((tmp_path / "reports" / name).read_text() for name in ("report.md", "tictactoe.md"))
    assert f"Git commit `{COMMIT[:10]}` for 10 of 11 runs; a provenance row names its commit where it differs." in md
    rows = [unlinked(ln) for ln in ttt.splitlines() if ln.startswith(f"| [`{TTT}`][") and "| 12.5 s |" in ln]
    assert [r.count("· commit `fedcba9876`") for r in rows] == [0, 1, 0] and "· commit `0123" not in ttt


def test_provenance_has_a_row_per_seed(ttt):
    part = ttt.split("\n## Provenance\n", 1)[1].splitlines()
    rows = [unlinked(ln) for ln in part if ln.startswith(f"| [`{TTT}`][")]
    seeds = [r.split(" | ")[1] for r in rows if "200,000 games | 12.5 s" in r]
    assert seeds == ["0", "1", "2"]
    assert unlinked(rows[0]).endswith(f"| run {run_id('train', TTT, 0)[:8]} | run {run_id('eval', TTT, 0)[:8]} | "
                                      "`feedbeeffeed` | exp-x |")


def test_optimal_rates_say_their_basis(ttt):
    table = unlinked(ttt.split("## Optimal-move rates", 1)[1])
    assert f"| `{TTT}` | tictactoe | tabular_q | 99.0% [98.0, 100.0] | IQM of 3 seeds, bootstrap interval |" in table
    assert "seed 0, 2,000 positions, Wilson interval" in table


def _reference_part(md: str) -> str:
    return md.split(f"\n## {REFERENCE_TITLE}\n", 1)[1].split("\n## ", 1)[0]


def _reference_rows(md: str) -> list[list[str]]:
    """The rows of every reference system's table, reduced to text, a blank game or system filled from above."""
    rows: list[list[str]] = []
    for ln in _reference_part(md).splitlines():
        if not ln.startswith("| ") or ln.startswith("| Game |"):
            continue
        cells = [c.strip() for c in unlinked(ln)[2:-2].split(" | ")]
        if rows:
            cells[:2] = [c or above for c, above in zip(cells[:2], rows[-1][:2])]
        rows.append(cells)
    return rows


def _unmarked(cell: str) -> str:
    """A cell without its note markers."""
    return re.sub(r" [⁰¹²³⁴⁵⁶⁷⁸⁹]+", "", cell)


def test_reference_table_has_a_row_per_published_number_under_its_system(md):
    rows = _reference_rows(md)
    assert len(rows) == len(REFERENCE_NUMBERS) and all(len(r) == len(REFERENCE_TABLE_HEADER) for r in rows)
    part = _reference_part(md)
    for key, system in SYSTEMS.items():  # each reference system is introduced once, above its own table
        assert part.count(f"\n### Reference system {key}: {system.title}\n\n{system.what}\n") == 1
    three = [r for r in rows if r[0] == "dots_and_boxes_2x2" and r[2] == "random, combined" and "99.99%" in r[3]]
    assert len(three) == 1 and three[0][4].count("`dots_and_boxes_2x2_seed001_") == 3  # all three in one cell


def test_reference_table_says_each_note_once_and_every_marker_has_its_note(md):
    part = _reference_part(md)
    notes = re.findall(r"^(\d+)\. (.*)$", part, re.M)
    texts = [t for _, t in notes]
    assert [int(k) for k, _ in notes] == list(range(1, len(notes) + 1)) and len(set(texts)) == len(texts)
    protocols = {(n.protocol, n.our_choice) for n in REFERENCE_NUMBERS}
    assert sum(t.startswith("Protocol: ") for t in texts) == len(protocols)
    digits = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
    marks = {int(m.translate(digits)) for m in re.findall(r" ([⁰¹²³⁴⁵⁶⁷⁸⁹]+)", part)}
    assert marks == set(range(1, len(notes) + 1))
    for n in REFERENCE_NUMBERS:  # protocols and reasons, each printed once, however many rows they apply to
        assert md.count(protocol_note(n)) == 1, n.protocol
        assert not n.reason or md.count(n.reason) <= 1, n.reason
    assert "homework" not in part.lower().replace("homework assignment (\"homework 4\"", "")  # explained once


def test_a_reason_shared_by_many_rows_is_one_note(results, tmp_path):
    """Reference system 001's three 2x2 reproductions, each short of every published figure: 9 verdicts, one reason."""
    from boardrl.report.reference_systems import REFERENCE_NUMBERS

    reason = next(n.reason for n in REFERENCE_NUMBERS if n.system == "001" and n.reason)
    for exp_id in ("dots_and_boxes_2x2_seed001_100", "dots_and_boxes_2x2_seed001_1k", "dots_and_boxes_2x2_seed001_10k"):
        write_train(results, exp_id, "dots_and_boxes_2x2", 0, ["random"], budget=100)
        write_json(results / "eval" / f"{exp_id}.json", dab_eval(exp_id, 0.02))
    build_report(results, tmp_path / "reports")
    md = (tmp_path / "reports" / "report.md").read_text()
    assert md.count(reason) == 1
    (number,) = [k for k, t in re.findall(r"^(\d+)\. (.*)$", _reference_part(md), re.M) if reason in t]
    mark = " " + number.translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
    rows = [r for r in _reference_rows(md)
            if r[0] == "dots_and_boxes_2x2" and not r[3].startswith(("win >=", "W+D >="))]
    assert len(rows) == 3 and all(r[4].count("→ not reached" + mark) == 3 for r in rows)


def test_reference_table_sets_our_best_of_the_same_kind_beside_a_reference_row(md):
    rows = _reference_rows(md)
    exp03 = next(r for r in rows if r[3].startswith('"almost perfect"'))
    assert exp03[:3] == ["tictactoe", "tabular Q-learning, self-play (70,000 episodes)", "random, as first"]
    assert exp03[4] == "`tictactoe_seed000_exp03`: not run yet"  # its reproduction is missing
    # the best's figure pools its 3 seeds (as first vs random: 98.76, 97, 99 % of 10,000 games each)
    assert exp03[5].startswith(f"`{TTT}` (200,000 games): 98.25 / 1.75 / 0.00; win 98.3% [")
    assert "(3 seeds x 10,000 games)" in exp03[5] and exp03[5].endswith(" → no number published to compare")
    qt = next(r for r in rows if r[1].startswith("QT, trained vs Random") and r[2] == "random, combined")
    assert qt[4] == "`tictactoe_seed002_qt_vs_random`: not run yet"
    assert qt[5].endswith(" → beaten")  # 95.20% lies below our pooled interval
    uci = [r[2] for r in rows if r[0] == "connect4" and "conv net" in r[1]]
    assert uci == [f"random, as first, from UCI {lab} positions" for lab in ("win", "draw", "loss")]


def test_reference_table_never_sets_another_kind_beside_a_reference_row(md):
    rows = _reference_rows(md)
    assert all(f"`{C4}`" not in " ".join(r) for r in rows)  # a tabular Connect 4 agent: no reference row of its kind
    neural = [r for r in rows if "DQ," in r[1] or "conv net" in r[1] or "TD(lambda)" in r[1]]
    tabular_ids = {f"`{i}`" for i in (TTT, SLOW, DAB, C4)}
    assert neural and not any(cell.split(" (")[0].split(":")[0] in tabular_ids for r in neural for cell in r[4:])
    # the synthetic tree has no neural experiment: each neural row names its own or none, and says so
    assert all(r[4].endswith(("not run yet", "in the full profile only (make repro PROFILE=full)"))
               or r[4].startswith("none yet") for r in neural)
    full_only = [r for r in neural if r[1].startswith("DQ, trained vs MaxMin")]
    assert full_only and all(r[4] == "`tictactoe_seed002_dqn_vs_maxmin`: in the full profile only "
                             "(make repro PROFILE=full)" for r in full_only)
    kinds = {n.agent: n.kind for n in REFERENCE_NUMBERS}
    for r in rows:
        for cell in r[4:]:
            m = re.match(r"`([a-z0-9_]+)`", cell)
            if m and m.group(1) in (TTT, SLOW, DAB, C4):
                assert LEARNER_KINDS["tabular_q"] == kinds[r[1].rsplit(" (", 1)[0]]


def test_reference_table_compares_a_baseline_only_with_our_baseline(md):
    rows = [r for r in _reference_rows(md) if r[1] == "Random player (baseline)"]
    assert [r[2] for r in rows] == ["random, as first", "random, as second"]
    first, second = (r[4] for r in rows)
    assert rows[0][5] == "-"
    assert first.startswith(f"`tournament@{BASELINE}` (no training): 0.652 [")
    assert first.endswith(" → reproduced")
    assert second.startswith(f"`tournament@{BASELINE}` (no training): 0.348 [")
    assert _unmarked(second).endswith(" → reproduced")


def test_check_kind_refuses_an_experiment_of_another_kind():
    from boardrl.errors import BoardRLError
    from boardrl.report.comparison import check_kind
    from boardrl.report.results import Experiment

    row = next(n for n in REFERENCE_NUMBERS if n.kind == "neural" and n.game == "tictactoe")
    tabular = Experiment(id="x", game="tictactoe", learner="tabular_q", profile=None, unit="games", budget=1,
                         seeds={})
    with pytest.raises(BoardRLError, match="cannot stand beside reference system 00.'s"):
        check_kind(row, tabular)


def test_every_learner_has_a_kind():
    from boardrl.learn import learner_names

    assert set(learner_names()) <= set(LEARNER_KINDS)


def test_tournament_section_sets_the_published_round_robin_beside_ours(md):
    part = md.split("## Round robins of fixed players", 1)[1]
    assert f"### {BASELINE} (tictactoe)" in part and "| `random` | 5914-2878 (1208 draws) |" in part


def test_html_pages_match_the_markdown(built):
    _, out = built
    page = (out / "tictactoe.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "98.8% <span class=\"nw\">[97.8, 99.8]</span>" in page and f'href="http://127.0.0.1:5000/#/runs/{run_id("eval", TTT, 0)}"' in page
    assert f'<img src="figures/curve_{TTT}.png"' in page and f'<h2 id="{SLOW}">{SLOW}</h2>' in page
    index = (out / "index.html").read_text()
    assert f'<a href="tictactoe.html#{TTT}"><code>{TTT}</code></a>' in index
    for name in ("index", *GAMES):
        html_page = (out / f"{name}.html").read_text()
        md = (out / ("report.md" if name == "index" else f"{name}.md")).read_text()
        assert html_page.count("<table>") == sum(ln.startswith("|---") for ln in md.splitlines()), name
        assert html_page.count("<h2 ") == md.count("\n## "), name


def test_rebuilding_gives_identical_files(built, tmp_path, monkeypatch):
    monkeypatch.setenv("BOARDRL_FIGURE_CACHE", "off")  # every figure drawn again: the drawing is what is compared
    results, first = built
    build_report(results, tmp_path / "again", data_summary=results.parent / "summary.json")
    files = [p for p in first.rglob("*") if p.is_file()]
    assert len(files) == N_FILES
    for p in files:
        assert p.read_bytes() == (tmp_path / "again" / p.relative_to(first)).read_bytes(), p.name


def test_data_summary_is_reported_when_present(md):
    assert "| classes.win | `44473` |" in md and "| rows | `67557` |" in md


def test_disagreeing_profiles_are_listed(tmp_path):
    r = tmp_path / "results"
    write_train(r, "tiny_one", "tictactoe", 0, ["random"], profile="tiny")
    write_json(r / "eval" / "full_one.json", ttt_eval("full_one", {0: 0.9}, profile="full"))
    build_report(r, tmp_path / "reports")
    md = (tmp_path / "reports" / "report.md").read_text()
    assert "Params profiles differ between experiments:\n\n- `full`: `full_one`\n- `tiny`: `tiny_one`\n" in unlinked(md)
    assert "| Profile |" in md  # the experiments table names each one's profile


def test_missing_results_dir_is_a_one_line_error_with_exit_2(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "pipeline" / "report.py"), "--results", str(tmp_path / "nope"),
                           "--out", str(tmp_path / "reports")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: results directory {tmp_path / 'nope'} not found; run the pipeline first (`dvc repro`)"]
    assert not (tmp_path / "reports").exists()


def test_pipeline_script_writes_the_report(results, tmp_path):
    """The report, and the headline table's data and README block (here in tmp_path: never the project's own)."""
    readme = tmp_path / "README.md"
    readme.write_text("<!-- headline:start -->\n<!-- headline:end -->\n")
    proc = subprocess.run([sys.executable, str(ROOT / "pipeline" / "report.py"), "--results", str(results),
                           "--out", str(tmp_path / "reports"), "--data-summary", str(tmp_path / "none.json"),
                           "--headline", str(tmp_path / "headline.json"), "--readme", str(readme)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)  # no published/full here
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "reports" / "report.md").is_file() and f"report: {N_FILES} files" in proc.stderr
    assert (tmp_path / "headline.json").is_file() and "| tictactoe | `perfect` |" in readme.read_text()


def test_pipeline_script_reports_a_malformed_file_in_one_line(results, tmp_path):
    bad = results / "eval" / f"{TTT}.json"
    bad.write_text("[]")
    proc = subprocess.run([sys.executable, str(ROOT / "pipeline" / "report.py"), "--results", str(results),
                           "--out", str(tmp_path / "reports")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"error: {bad}: expected a JSON object, found list"]


def test_a_failed_build_leaves_the_previous_report(results, tmp_path):
    out = tmp_path / "reports"
    build_report(results, out)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    bad = json.loads((results / "eval" / f"{TTT}.json").read_text())
    del bad["seeds"]["0"]["opponents"]["random"]["as_second"]
    (results / "eval" / f"{TTT}.json").write_text(json.dumps(bad))
    with pytest.raises(ReportError, match="seeds.0.opponents.random.as_second: Field required"):
        build_report(results, out)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left behind
