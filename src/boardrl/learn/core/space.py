"""Search spaces: what a sweep may vary in a learner's params, declared beside the learner, narrowed in params.

A learner class names its space in ``search_space`` (``learn/tabular_q.py``): dotted param keys
(``exploration.end``) mapped to a ``Dimension``: a float or int range (``log: true`` where the scale is
multiplicative, as for learning rates) or a list of choices.  ``sweeps.<id>.space`` in params.yaml may narrow a
dimension (new bounds or choices), drop it (``null``) or add one for any other param of the learner; the result
is checked against the learner's params model before a trial runs, so a bad space is one line, not a failed
study.

Two things keep a sampler out of combinations that make no sense (issue 38):

- ``of``: the dimension is searched as a *fraction* of another param or of the trial's training ``budget``, so
  ``exploration.end`` is drawn as a fraction of ``exploration.start`` (it can never start below its end) and
  ``exploration.decay_games`` as a fraction of the budget (it can never outlast training).  Optuna sees the
  fraction, under the name ``<key>/<of>``; the learner gets the product (rounded when ``of`` is an integer, such
  as the budget).  A bound of the box (rejection, a constraint) would instead waste trials or bias the sampler.
- ``when``: the dimension is drawn only when other params take the listed values (a conditional space), so a
  ``constant`` schedule draws no end and no decay: Optuna's TPE then models each branch with the trials that have
  it (``group=True``).

The values a trial trains with are kept in its user attribute ``learner_values`` (dotted keys): its Optuna params
are the fractions, not the values a params file takes.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from boardrl.errors import BoardRLError


class SpaceError(BoardRLError):
    """A search space that cannot be sampled or does not fit the learner's params."""


#: ``of`` naming the trial's training budget (games or steps, after the sweep's ``budget``).
BUDGET = "budget"
#: The trial user attribute holding the learner values (dotted keys) a trial trains with.
VALUES_ATTR = "learner_values"


class Dimension(BaseModel):
    """One searched param: ``float``/``int`` in [low, high] (log scale optional) or one of ``choices``; ``of``
    makes it a fraction of another param (or of ``budget``), ``when`` draws it only under the listed values of
    other params (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["float", "int", "categorical"]
    low: float | None = None
    high: float | None = None
    log: bool = False
    choices: list[Any] | None = None
    of: str | None = None
    when: dict[str, list[Any]] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> "Dimension":
        if self.when is not None and not all(self.when.values()):
            raise ValueError("when: each condition needs a non-empty list of values")
        if self.of is not None and self.type != "float":
            raise ValueError(f"of: {self.of} makes the dimension a fraction, so its type is float, not {self.type}")
        if self.type == "categorical":
            if not self.choices:
                raise ValueError("a categorical dimension needs a non-empty list of choices")
            return self
        if self.low is None or self.high is None:
            raise ValueError(f"a {self.type} dimension needs low and high")
        if self.low > self.high:
            raise ValueError(f"low {self.low} > high {self.high}")
        if self.log and self.low <= 0:
            raise ValueError(f"a log scale needs low > 0, got {self.low}")
        return self

    def suggest(self, trial: Any, name: str) -> Any:
        """The value an Optuna trial draws for this dimension."""
        if self.type == "categorical":
            return trial.suggest_categorical(name, self.choices)
        if self.type == "int":
            return trial.suggest_int(name, int(self.low), int(self.high), log=self.log)
        return trial.suggest_float(name, float(self.low), float(self.high), log=self.log)


def floats(low: float, high: float, log: bool = False, when: dict[str, list[Any]] | None = None) -> Dimension:
    return Dimension(type="float", low=low, high=high, log=log, when=when)


def ints(low: int, high: int, log: bool = False, when: dict[str, list[Any]] | None = None) -> Dimension:
    return Dimension(type="int", low=low, high=high, log=log, when=when)


def choices(*values: Any, when: dict[str, list[Any]] | None = None) -> Dimension:
    return Dimension(type="categorical", choices=list(values), when=when)


def fraction_of(of: str, low: float, high: float, log: bool = False,
                when: dict[str, list[Any]] | None = None) -> Dimension:
    """A param searched as ``low``..``high`` times param ``of`` (a dotted key, or ``BUDGET``)."""
    return Dimension(type="float", low=low, high=high, log=log, of=of, when=when)


def optuna_name(key: str, dim: Dimension) -> str:
    """The name Optuna (and its dashboard) knows the dimension by: the key, or ``<key>/<of>`` for a fraction."""
    return f"{key}/{dim.of}" if dim.of else key


Space = dict[str, Dimension]


def _as_dimension(key: str, value: Any, base: Dimension | None) -> Dimension:
    """An override: a full dimension, or a partial one (bounds only) completing the learner's own."""
    if isinstance(value, Dimension):
        return value
    if not isinstance(value, dict):
        raise SpaceError(f"space.{key}: expected a mapping such as {{low: 0.01, high: 0.5}} or {{choices: [...]}}, "
                         f"or null to drop it; got {value!r}")
    merged = {**(base.model_dump(exclude_none=True) if base else {}), **value}
    if "type" not in value and ("choices" in value or {"low", "high"} & set(value)):
        # the override's own keys say its kind: choices make it categorical, bounds a range (int stays int)
        numeric = base.type if base is not None and base.type != "categorical" else "float"
        merged["type"] = "categorical" if "choices" in value else numeric
    merged.setdefault("type", "float")
    if merged["type"] == "categorical":
        for field in ("low", "high", "log", "of"):
            merged.pop(field, None)
    else:
        merged.pop("choices", None)
    try:
        return Dimension(**merged)
    except ValueError as exc:
        msg = exc.errors()[0]["msg"] if hasattr(exc, "errors") else str(exc)
        raise SpaceError(f"space.{key}: {msg.removeprefix('Value error, ')}") from None


def narrow(space: Space, overrides: dict[str, Any] | None) -> Space:
    """The learner's space with params overrides applied (``null`` drops a dimension)."""
    out = dict(space)
    for key, value in (overrides or {}).items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _as_dimension(key, value, space.get(key))
    if not out:
        raise SpaceError("the search space is empty: nothing to tune")
    for key, dim in out.items():
        ref = out.get(dim.of) if dim.of not in (None, BUDGET) else None
        if ref is not None and ref.of is not None:
            raise SpaceError(f"space.{key}: of: {dim.of} is itself a fraction; name a param searched as a value")
    return out


def set_dotted(params: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """A copy of nested ``params`` with dotted ``key`` set (``exploration.end``), creating dicts on the way."""
    out = dict(params)
    head, _, rest = key.partition(".")
    if rest:
        inner = out.get(head)
        out[head] = set_dotted(inner if isinstance(inner, dict) else {}, rest, value)
    else:
        out[head] = value
    return out


def get_dotted(params: dict[str, Any], key: str) -> Any:
    """The value at dotted ``key`` of nested ``params`` (``None`` where absent)."""
    for part in key.split("."):
        params = params.get(part) if isinstance(params, dict) else None
    return params


def learner_base(params_model: type[BaseModel], unit: str, learner_params: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """(every learner param, its default filled in, nested; the training budget): what ``of`` and ``when`` read
    for a param the space does not search."""
    try:
        model = params_model.model_validate(learner_params)
    except ValueError as exc:
        err = exc.errors()[0] if hasattr(exc, "errors") else {"msg": str(exc), "loc": ()}
        raise SpaceError(f"the experiment's params are not valid learner params "
                         f"({'.'.join(str(p) for p in err['loc'])}: {err['msg']})") from None
    return model.model_dump(), int(getattr(model, unit))


def ordered(space: Space) -> list[tuple[str, Dimension]]:
    """Values before the fractions that read them, each group by key (the order is part of a seeded sampler)."""
    return sorted(space.items(), key=lambda kv: (kv[1].of is not None, kv[0]))


def applies(dim: Dimension, values: dict[str, Any], base: dict[str, Any]) -> bool:
    """Whether ``when`` holds for the values drawn so far (a param not searched: its value in ``base``)."""
    return all((values[k] if k in values else get_dotted(base, k)) in allowed
               for k, allowed in (dim.when or {}).items())


def scale(fraction: float, reference: Any) -> float | int:
    """``fraction`` of ``reference``; of an integer (a budget) it is an integer, at least 1."""
    if isinstance(reference, int) and not isinstance(reference, bool):
        return max(1, round(fraction * reference))
    return fraction * float(reference)


def reference(dim: Dimension, values: dict[str, Any], base: dict[str, Any], budget: int) -> Any:
    if dim.of == BUDGET:
        return budget
    value = values[dim.of] if dim.of in values else get_dotted(base, dim.of)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise SpaceError(f"of: {dim.of} is not a numeric learner param (found {value!r})")
    return value


def suggest_values(space: Space, trial: Any, base: dict[str, Any], budget: int) -> dict[str, Any]:
    """The learner values (dotted keys) a trial trains with: each dimension whose ``when`` holds, drawn under its
    Optuna name, fractions multiplied out.  Kept in the trial's ``VALUES_ATTR`` user attribute."""
    values: dict[str, Any] = {}
    for key, dim in ordered(space):
        if not applies(dim, values, base):
            continue
        drawn = dim.suggest(trial, optuna_name(key, dim))
        values[key] = drawn if dim.of is None else scale(drawn, reference(dim, values, base, budget))
    trial.set_user_attr(VALUES_ATTR, values)
    return values


def trial_values(trial: Any) -> dict[str, Any]:
    """The learner values a trial trained with (its Optuna params for a study made before ``VALUES_ATTR``)."""
    return dict(trial.user_attrs.get(VALUES_ATTR) or trial.params)


def _extremes(key: str, dim: Dimension, space: Space, base: dict[str, Any], budget: int) -> list[Any]:
    """The values a dimension can give the learner at its bounds (or its choices)."""
    if dim.type == "categorical":
        return list(dim.choices)
    if dim.of is None:
        return [int(v) if dim.type == "int" else v for v in (dim.low, dim.high)]
    ref = space.get(dim.of)
    if dim.of == BUDGET:
        lo = hi = budget
    elif ref is not None and ref.type != "categorical":
        lo, hi = ref.low, ref.high
    else:
        lo = hi = reference(dim, {}, base, budget)
    return [scale(dim.low, lo), scale(dim.high, hi)]


def check_space(space: Space, params_model: type[BaseModel], base: dict[str, Any], unit: str) -> None:
    """Every dimension's extreme values (and choices) must give valid learner params; ``SpaceError`` names the
    first that does not."""
    full, budget = learner_base(params_model, unit, base)
    for key, dim in space.items():
        for v in _extremes(key, dim, space, full, budget):
            try:
                params_model.model_validate(set_dotted(base, key, v))
            except ValueError as exc:
                err = exc.errors()[0] if hasattr(exc, "errors") else {"msg": str(exc), "loc": ()}
                where = ".".join(str(p) for p in err["loc"])
                raise SpaceError(f"space.{key} = {v!r} is not a valid learner param ({where}: {err['msg']})") from None


def experiment_space(learner: str, experiment_params: dict[str, Any], overrides: dict[str, Any] | None,
                     budget: int | None) -> Space:
    """The learner's space narrowed by ``overrides``, checked against its params model with the experiment's
    params (and the sweep's budget, when it sets one): what params validation and a sweep both use."""
    from boardrl.learn import learner_class

    cls = learner_class(learner)
    narrowed = narrow(space_of(learner), overrides)
    base = {**experiment_params, **({cls.unit: budget} if budget is not None else {})}
    check_space(narrowed, cls.params_model, base, cls.unit)
    return narrowed


def space_of(learner: str) -> Space:
    """The learner's own search space (``search_space`` on its class); ``SpaceError`` if it has none."""
    from boardrl.learn import learner_class

    space = getattr(learner_class(learner), "search_space", None)
    if not space:
        raise SpaceError(f"learner {learner!r} declares no search space (search_space on its class)")
    return dict(space)
