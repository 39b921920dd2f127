"""Search spaces: what a sweep may vary in a learner's params, declared beside the learner, narrowed in params.

A learner class names its space in ``search_space`` (``learn/tabular_q.py``): dotted param keys
(``exploration.end``) mapped to a ``Dimension``: a float or int range (``log: true`` where the scale is
multiplicative, as for learning rates) or a list of choices.  ``sweeps.<id>.space`` in params.yaml may narrow a
dimension (new bounds or choices), drop it (``null``) or add one for any other param of the learner; the result
is checked against the learner's params model before a trial runs, so a bad space is one line, not a failed
study.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from boardrl.errors import BoardRLError


class SpaceError(BoardRLError):
    """A search space that cannot be sampled or does not fit the learner's params."""


class Dimension(BaseModel):
    """One searched param: ``float``/``int`` in [low, high] (log scale optional) or one of ``choices``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["float", "int", "categorical"]
    low: float | None = None
    high: float | None = None
    log: bool = False
    choices: list[Any] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> "Dimension":
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


def floats(low: float, high: float, log: bool = False) -> Dimension:
    return Dimension(type="float", low=low, high=high, log=log)


def ints(low: int, high: int, log: bool = False) -> Dimension:
    return Dimension(type="int", low=low, high=high, log=log)


def choices(*values: Any) -> Dimension:
    return Dimension(type="categorical", choices=list(values))


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
        merged.pop("low", None), merged.pop("high", None), merged.pop("log", None)
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


def check_space(space: Space, params_model: type[BaseModel], base: dict[str, Any]) -> None:
    """Every dimension's bounds (and choices) must give valid learner params; ``SpaceError`` names the first."""
    for key, dim in space.items():
        values = dim.choices if dim.type == "categorical" else [dim.low, dim.high]
        for v in values:
            v = int(v) if dim.type == "int" else v
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
    check_space(narrowed, cls.params_model, base)
    return narrowed


def space_of(learner: str) -> Space:
    """The learner's own search space (``search_space`` on its class); ``SpaceError`` if it has none."""
    from boardrl.learn import learner_class

    space = getattr(learner_class(learner), "search_space", None)
    if not space:
        raise SpaceError(f"learner {learner!r} declares no search space (search_space on its class)")
    return dict(space)
