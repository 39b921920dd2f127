"""The report's "Studies" section: what each study last wrote under ``studies/<name>/``.

Why from files, not from results/: a study is a set of tracked DVC experiments that ``boardrl study <name>`` runs
(hours of training outside the profile), so the report cannot produce it.  It shows the table and figure the
study wrote and committed, the command that reruns it and the DVC experiment behind each row.  A study that has
not been run is named as such, so every comparison the project defines is in sight.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from boardrl.experiments.study_freshness import Freshness, freshness, freshness_note
from boardrl.experiments.study_spec import STUDIES_DIR, load_study
from boardrl.experiments.study_table import table_cells
from boardrl.report.document import Block, Bullets, Heading, Image, Paragraph, Span, Table, text
from boardrl.report.results import ReportError

RESULTS = "results.json"
FIGURE = "results.png"


SEEDS_KEY = "experiments.{id}.seeds"  # the dotted key by which a study trains other seeds of an experiment


@dataclass(frozen=True)
class StudyResults:
    name: str
    description: str
    table: list[dict[str, Any]] | None  # results.json's rows; None: the study has not been run
    figure: Path | None
    seeds_of: dict[str, list[int]] = field(default_factory=dict)  # experiment -> the seeds set in ``common``
    as_params: frozenset[str] = frozenset()  # variations that change nothing else: the profile's settings
    profile: str = "default"  # the params profile whose settings the study starts from (its ``base_profile``)
    fresh: Freshness = Freshness()  # the variations whose rows ran with something this commit has changed

    def _as_profile_row(self, exp_id: str) -> dict[str, Any] | None:
        """The finished row of ``exp_id`` trained with the profile's own settings (a variation of no keys), and
        still this commit's: a row trained by older code is no other sample of today's experiment."""
        return next((r for r in self.table or []
                     if r.get("experiment") == exp_id and r.get("variation") in self.as_params
                     and r.get("variation") not in self.fresh.stale), None)

    def more_seeds(self, exp_id: str) -> list[int]:
        """The training seeds of ``exp_id`` that a finished row of this study trained with the profile's own
        settings: other samples of the same experiment, so the spread over training runs of a one-seed
        experiment is read here.  Empty when the study changes its settings."""
        return list(self.seeds_of.get(exp_id, [])) if self._as_profile_row(exp_id) is not None else []

    def seed_wins(self, exp_id: str, opponent: str) -> dict[int, tuple[float, float]]:
        """Each of ``more_seeds(exp_id)``'s wins against ``opponent`` as first and as second, from the table's
        per-seed columns; a seed that did not meet ``opponent`` is left out."""
        row = self._as_profile_row(exp_id)
        if row is None:
            return {}
        per_seat = (row.get("seat_wins_per_seed") or {}).get(opponent) or {}
        first, second = per_seat.get("as_first") or {}, per_seat.get("as_second") or {}
        return {k: (float(first[str(k)]), float(second[str(k)])) for k in self.seeds_of.get(exp_id, [])
                if first.get(str(k)) is not None and second.get(str(k)) is not None}


def load_studies(project: Path) -> list[StudyResults]:
    """Every ``studies/<name>.yaml`` of ``project`` with what its last run wrote; a bad study file or results
    file is a ``BoardRLError`` naming it."""
    out = []
    for spec in sorted((Path(project) / STUDIES_DIR).glob("*.yaml")):
        study = load_study(Path(project), spec.stem)
        folder = spec.with_suffix("")
        results = folder / RESULTS
        table = None
        if results.is_file():
            try:
                table = json.loads(results.read_text())["rows"]
            except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
                raise ReportError(f"{results}: not a study's results ({exc})") from None
        figure = folder / FIGURE
        seeds_of = {exp_id: list(study.spec.common[SEEDS_KEY.format(id=exp_id)])
                    for exp_id in study.spec.experiments if SEEDS_KEY.format(id=exp_id) in study.spec.common}
        out.append(StudyResults(study.name, study.spec.description.strip(), table,
                                figure if table is not None and figure.is_file() else None, seeds_of,
                                as_profile(study.spec.experiments, study.spec.common, study.spec.variations),
                                study.spec.base_profile or "default",
                                freshness(Path(project), study) if table else Freshness()))
    return out


def as_profile(experiments: list[str], common: dict[str, Any], variations: dict[str, dict[str, Any]]
               ) -> frozenset[str]:
    """The variations that train and play with the profile's own settings: no keys of their own, and nothing in
    ``common`` but the compared experiments' training seeds.

    Why ``common`` counts: a study may set how every variation plays (``alphazero_search`` plays PUCT with 100
    simulations, where params.yaml's ``connect4_alphazero`` plays 800 with playout values); its variation of no
    keys then trains the profile's networks but scores them another way, and is no other seed of the profile's
    experiment."""
    seeds = {SEEDS_KEY.format(id=exp_id) for exp_id in experiments}
    if any(key not in seeds for key in common):
        return frozenset()
    return frozenset(v for v, keys in variations.items() if not keys)


def study_blocks(studies: list[StudyResults], fig_dir: Path) -> list[Block]:
    """The "Studies" section (nothing when the project defines none); figures are copied into ``fig_dir``."""
    if not studies:
        return []
    out: list[Block] = [
        Heading(2, "Studies"),
        Paragraph(text(
            "Comparisons of settings, each a set of tracked DVC experiments that ",
            Span("boardrl study <name>", code=True), " queues, runs and resumes (", Span("studies/<name>.yaml", code=True),
            "; the docs' studies page says how). The numbers are interquartile means over each variation's training "
            "seeds, from the metrics files of the DVC experiment its row names (", Span("dvc exp show", code=True),
            "), as the study last wrote them to ", Span("studies/<name>/results.json", code=True),
            ". A profile run does not rerun them; each row's commit says which code trained it, and a study whose "
            "rows ran with code, params or data that this commit has changed says so below its table.")),
    ]
    for study in studies:
        if study.table is not None:
            out += _one(study, fig_dir)
    waiting = [s for s in studies if s.table is None]
    if waiting:
        out += [Heading(3, "Not run yet"),
                Bullets([[Span(f"boardrl study {s.name}", code=True), Span(": "), *described(s.description)]
                         for s in waiting])]
    return out


def described(description: str) -> list[Span]:
    """A study file's description, its `backticked` words as code (the file is written in Markdown's way)."""
    parts = description.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: all of it as written
        return [Span(description)]
    return [Span(part, code=i % 2 == 1) for i, part in enumerate(parts) if part]


def _one(study: StudyResults, fig_dir: Path) -> list[Block]:
    cells = table_cells(study.table or [])
    out: list[Block] = [
        Heading(3, study.name),
        Paragraph([*described(study.description), *text(" Rerun: ", Span(f"boardrl study {study.name}", code=True),
                                                         ".")]),
        Table(cells.head, [[[Span(c, code=i in cells.code)] for i, c in enumerate(row)] for row in cells.rows],
              numeric=frozenset(range(cells.numeric_from, len(cells.head)))),
    ]
    if not cells.rows:
        out.append(Paragraph(text("No variation has finished yet.")))
    note = freshness_note(study.name, study.fresh)
    if note is not None:
        out.append(Paragraph(described(note)))
    if study.figure is not None:
        name = f"study_{study.name}.png"
        shutil.copyfile(study.figure, fig_dir / name)
        out.append(Image(f"figures/{name}", f"study {study.name}: each variation's rates"))
    return out
