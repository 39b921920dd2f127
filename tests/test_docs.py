"""The documentation site builds with ``mkdocs build --strict``, and its pages keep the project's rules.

Why here: a broken link or anchor, a page missing from the nav, an API object that moved, or a generated block
that names a learner that no longer exists is a warning, and --strict turns it into a failed build, so CI
catches it.  The site is built once (mkdocs.yml; the generated blocks come from docs/hooks/generated.py) into a
temporary folder.  Besides the build: the CLI page lists every command of the typer app; no page states a result
figure by hand (the rule tests/test_readme_figures.py applies to README), except the records under
docs/studies/, each of which must say how to rerun it, and the reference systems' page, which quotes their
published figures; README's links into docs/ point at pages that exist; every benchmarks/ script a page names
exists.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_readme_figures import figures, markdown_lines

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: Pages that may state figures: the records of runs (each with the command that reruns it) and the reference
#: systems' published figures, which are theirs, not our results.
FIGURES_ALLOWED = ("studies/", "reference-systems.md")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}"
    return out


def test_site_builds_with_every_generated_block_filled(site):
    pages = list(site.rglob("*.html"))
    assert (site / "index.html").is_file() and len(pages) > 30
    left = [p.relative_to(site).as_posix() for p in pages if "<!-- boardrl:" in p.read_text(encoding="utf-8")]
    assert not left, f"generated blocks left unfilled (a marker the hook did not match): {left}"
    results = (site / "results" / "index.html").read_text(encoding="utf-8")
    assert "<table>" in results, "the headline table is missing from the results page"


def test_cli_reference_lists_every_command(site):
    import typer.main

    from boardrl.cli import app

    def paths(command, prefix):
        yield prefix
        for name, sub in getattr(command, "commands", {}).items():
            yield from paths(sub, f"{prefix} {name}")

    page = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    missing = [p for p in paths(typer.main.get_command(app), "boardrl") if f"<code>{p}</code>" not in page]
    assert not missing, f"commands missing from the CLI reference: {missing}"


@pytest.mark.parametrize("object_id", [
    "boardrl.learn.core.base.Learner", "boardrl.agents.base.Agent", "boardrl.games.base.Game",
    "boardrl.solvers.base.Referee", "boardrl.agents.puct.Evaluator"])
def test_api_reference_documents_the_extension_points(site, object_id):
    found = [p for p in (site / "reference" / "api").rglob("*.html") if f'id="{object_id}"' in p.read_text("utf-8")]
    assert found, f"{object_id} is not documented in the API reference"


def _pages() -> list[str]:
    return sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))


@pytest.mark.parametrize("page", [p for p in _pages() if not p.startswith(FIGURES_ALLOWED)])
def test_no_hand_typed_result_figure(page):
    text = (DOCS / page).read_text(encoding="utf-8")
    found = [f"docs/{page}:{n}: {', '.join(f)}: {line.strip()[:120]}"
             for n, line in markdown_lines(text) if (f := figures(line))]
    assert not found, ("result figures typed by hand (results belong to the report, a generated block, or a "
                       "study record under docs/studies/ with the command that reruns it):\n" + "\n".join(found))


@pytest.mark.parametrize("page", [p for p in _pages() if p.startswith("studies/") and p != "studies/index.md"])
def test_study_record_says_how_to_rerun_it(page):
    head = "\n".join((DOCS / page).read_text(encoding="utf-8").splitlines()[:40])
    assert re.search(r"^Rerun:\s*\n+```\n.*?\b(make|boardrl|bash|\.venv/bin/python)\b", head, re.M | re.S), (
        f"docs/{page}: a record of results starts with 'Rerun:' and a code block of the commands that rerun it")


@pytest.mark.parametrize("page", ["README.md", *(f"docs/{p}" for p in _pages())])
def test_every_benchmark_script_named_exists(page):
    """A command a page gives must rerun: a record naming a script that was removed cannot be checked by anyone."""
    text = (ROOT / page).read_text(encoding="utf-8")
    named = sorted(set(re.findall(r"(?<![\w/])benchmarks/[\w./-]+\.(?:py|sh)\b", text)))
    missing = [path for path in named if not (ROOT / path).is_file()]
    assert not missing, f"{page} names benchmark scripts that do not exist: {', '.join(missing)}"


def test_readme_links_into_the_docs_exist():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\((docs/[^)#\s]+)", readme)
    assert links, "README links into the documentation"
    assert not [link for link in links if not (ROOT / link).is_file()], "README links to docs pages that do not exist"
