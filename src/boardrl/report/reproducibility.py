"""Which of the report's figures another machine reproduces bit for bit, and which only in distribution.

Why a section of its own: a reader who reruns ``make repro`` elsewhere must know what to expect before comparing.
A trained model is a function of (game, learner params, seed) (tests/learn/test_training_invariance.py).  Learners
whose arithmetic is numpy and numba give the same bits on every machine.  torch learners give the same bits on
x86-64 CPUs with AVX2 because boardrl pins torch's kernel dispatch, thread count and deterministic kernels
(``boardrl/cpu_pins.py``, ``learn/core/device.py``; tests/learn/test_cpu_determinism.py); on a GPU, or with
``BOARDRL_CPU_ISA=native``, they are reproducible in distribution only, so what carries over there is the interval
over training seeds, and an experiment of one seed has no such interval.
"""

from __future__ import annotations

from boardrl.report.document import Block, Bullets, Heading, Paragraph, Span, text
from boardrl.report.links import Links
from boardrl.report.results import Experiment
from boardrl.report.studies import StudyResults

MIN_SEEDS = 3  # fewer training seeds give no interval over training runs worth the name


def arithmetic(learner: str) -> str:
    """``numpy`` or ``torch``: whose arithmetic trains ``learner`` (its class says)."""
    from boardrl.learn import learner_class

    return learner_class(learner).arithmetic


def _ids(exps: list[Experiment], links: Links) -> list[Span]:
    spans: list[Span] = []
    for i, e in enumerate(exps):
        spans += [Span(", ")] if i else []
        spans += [links.experiment(e.id), Span(f" ({len(e.seeds)} seed{'s' if len(e.seeds) != 1 else ''})")]
    return spans


def _studied(few: list[Experiment], studies: list[StudyResults]) -> list[Span]:
    """Where the few-seed experiments' other training seeds are: each study that trained more seeds of one of
    them with its settings unchanged, and which seeds."""
    spans: list[Span] = []
    for study in studies:
        found = [(e.id, more) for e in few if (more := [s for s in study.more_seeds(e.id) if s not in e.seeds])]
        if not found:
            continue
        spans += [Span("; " if spans else ""), Span("study "), Span(study.name, code=True), Span(": ")]
        for i, (exp_id, more) in enumerate(found):
            spans += [Span(", " if i else ""), Span(exp_id, code=True),
                      Span(f" seed{'s' if len(more) != 1 else ''} {', '.join(map(str, more))}")]
    return spans


def reproducibility_blocks(exps: list[Experiment], links: Links | None = None,
                           studies: list[StudyResults] | None = None) -> list[Block]:
    """The section: numpy experiments, torch experiments, and the torch ones with fewer than MIN_SEEDS seeds,
    with the studies that trained more seeds of them (``links``: how ids link to their sections)."""
    links = links or Links()
    numpy_exps = [e for e in exps if arithmetic(e.learner) == "numpy"]
    torch_exps = [e for e in exps if arithmetic(e.learner) == "torch"]
    few = [e for e in torch_exps if len(e.seeds) < MIN_SEEDS]
    items = []
    if numpy_exps:
        items.append([Span("Bit for bit on any machine (numpy and numba arithmetic): "), *_ids(numpy_exps, links)])
    if torch_exps:
        items.append([Span("Bit for bit on x86-64 CPUs with AVX2 under boardrl's CPU pins, in distribution on a GPU "
                           "or with BOARDRL_CPU_ISA=native (torch): "), *_ids(torch_exps, links)])
    if few:
        items.append([Span(f"torch experiments with fewer than {MIN_SEEDS} training seeds, whose intervals are over "
                           "games, not training runs (elsewhere than under the pins they are one sample): "),
                      *_ids(few, links)])
        studied = _studied(few, studies or [])
        if studied:
            items.append([Span("Their other training seeds, with the same settings, judged on the same ladders "
                               "(section Studies; each seed's wins per seat are in its table): "), *studied])
    if not items:
        return []
    return [Heading(2, "What another machine reproduces"),
            Paragraph(text("A trained model depends on its game, learner params and seed only: not on the learning "
                           "curve's points, the checkpoints or where a run was interrupted. Whether its bits carry "
                           "to another machine depends on whose arithmetic trains it.")),
            Bullets(items)]
