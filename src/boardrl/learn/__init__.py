"""Training algorithms that produce agents, found by name.

A learner lives in ``learn/<name>.py`` and names its class in a module-level ``LEARNER = ...``; the base class
and its contract are in ``learn/core/base.py``.  Why discovery by module name instead of a hand-kept table here:
adding ``learn/dqn.py`` must not touch a file every other learner imports, so existing experiments keep
their code fingerprint and DVC does not retrain them.

``make_learner(name)`` gives a learner, ``learner_params_model(name)`` its pydantic params model (extra keys
forbidden; defaults reproduce the seed the learner comes from; a torch learner keeps it in ``learn/<x>_params.py``
so that checking params never imports torch), ``learner_unit(name)`` its budget's unit, ``learner_names()``
every learner, and
``load_agent(game, agent_name, model_dir)`` restores what a learner's agent saved.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from pathlib import Path

from boardrl.agents.learned import load_agent
from boardrl.learn.core.base import EvalCallback, Exploration, Learner, LearnError, LearnerParams

_MARKER = "\nLEARNER = "


@cache
def learner_names() -> tuple[str, ...]:
    """Every learner module of this package (those that set ``LEARNER``), sorted; nothing is imported."""
    here = Path(__file__).parent
    names = [m.name for m in pkgutil.iter_modules([str(here)])
             if not m.ispkg and _MARKER in (here / f"{m.name}.py").read_text(encoding="utf-8")]
    return tuple(sorted(names))


def learner_class(name: str) -> type[Learner]:
    """The Learner subclass called ``name``; ``LearnError`` naming the known learners otherwise."""
    if name not in learner_names():
        raise LearnError(f"unknown learner {name!r}; known learners: {', '.join(learner_names())}")
    cls = importlib.import_module(f"boardrl.learn.{name}").LEARNER
    if cls.name != name:
        raise LearnError(f"learn/{name}.py sets LEARNER to {cls.__name__}, whose name is {cls.name!r}")
    return cls


@cache
def _light_params() -> dict[str, tuple[type[LearnerParams], str]]:
    """learner name -> (params model, budget unit) from the ``learn/*_params.py`` modules: the models of learners
    whose own module imports torch, kept apart so that validating params (every pipeline stage does) does not
    import it (about 1.4 s a stage)."""
    here = Path(__file__).parent
    out: dict[str, tuple[type[LearnerParams], str]] = {}
    for m in pkgutil.iter_modules([str(here)]):
        if not m.ispkg and m.name.endswith("_params"):
            out.update(importlib.import_module(f"boardrl.learn.{m.name}").LEARNER_PARAMS)
    return out


def learner_params_model(name: str) -> type[LearnerParams]:
    """The params model of learner ``name`` (its defaults are the learner's own)."""
    light = _light_params().get(name)
    return light[0] if light else learner_class(name).params_model


def learner_unit(name: str) -> str:
    """What learner ``name``'s training budget counts ("games" or "steps")."""
    light = _light_params().get(name)
    return light[1] if light else learner_class(name).unit


def stage_threads(name: str, params: LearnerParams) -> int | None:
    """torch's CPU threads in every stage of an experiment of learner ``name`` (train, curve and evaluate alike),
    or None for a learner that does not use torch.

    Why one count for all three stages: the count is part of what a model's play computes (learn/core/device.py
    ``resolved_threads``), so a ladder played on the machine's cores would differ from machine to machine; and
    the stage scheduler (experiments/parallel_repro.py) reads it as the cores each stage keeps busy.
    """
    cls = learner_class(name)
    if cls.arithmetic != "torch":
        return None
    from boardrl.learn.core.device import resolved_threads  # torch is imported only where it is used

    return resolved_threads(getattr(params, "threads", None), cls.default_threads)


def pin_stage_threads(name: str, params: LearnerParams) -> int | None:
    """Set torch's threads to ``stage_threads`` (a stage that plays the experiment's models calls this first)."""
    threads = stage_threads(name, params)
    if threads is not None:
        from boardrl.learn.core.device import torch_threads

        torch_threads(threads)
    return threads


def make_learner(name: str) -> Learner:
    """A fresh learner called ``name``."""
    return learner_class(name)()


__all__ = [
    "EvalCallback", "Exploration", "Learner", "LearnError", "LearnerParams", "learner_class", "learner_names",
    "learner_params_model", "learner_unit", "load_agent", "make_learner", "pin_stage_threads", "stage_threads",
]
