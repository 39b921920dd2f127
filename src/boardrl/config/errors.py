"""A params file's problems as one line: ``ConfigError``, pydantic's errors reworded, and ``fail``."""

from __future__ import annotations

import sys
import types
import typing
from typing import Any, NoReturn

from boardrl.errors import BoardRLError
from pydantic import BaseModel, ValidationError

PARAMS_FILE = "params.yaml"
EXIT_BAD_PARAMS = 2


class ConfigError(BoardRLError):
    """A params file that does not fit the schema; ``key`` is the dotted path of the offending entry."""

    def __init__(self, key: str, problem: str, file: str = PARAMS_FILE) -> None:
        self.key, self.problem, self.file = key, problem, file
        super().__init__(f"{file}: {key}: {problem}" if key else f"{file}: {problem}")


# ---------------------------------------------------------------------------------------------- errors
def _loc_text(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def union_members(tp: Any) -> list[Any]:
    """The members of a union annotation (or the annotation itself)."""
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        return [a for a in typing.get_args(tp) if a is not type(None)]
    return [tp]


def _model_at(model: Any, loc: tuple[Any, ...]) -> Any:
    """The pydantic model class that validates the value at ``loc`` inside ``model`` (None if not a model)."""
    tp: Any = model
    for part in loc:
        nxt = None
        for cand in union_members(tp):
            if isinstance(cand, type) and issubclass(cand, BaseModel):
                field = cand.model_fields.get(part) if isinstance(part, str) else None
                if field is not None:
                    nxt = field.annotation
            elif typing.get_origin(cand) is dict:
                nxt = typing.get_args(cand)[1]
            elif typing.get_origin(cand) is list and isinstance(part, int):
                nxt = typing.get_args(cand)[0]
            if nxt is not None:
                break
        if nxt is None:
            return None
        tp = nxt
    models = [c for c in union_members(tp) if isinstance(c, type) and issubclass(c, BaseModel)]
    return models[0] if models else None


def _problem(err: dict[str, Any], root_model: Any) -> tuple[tuple[Any, ...], str]:
    """(location, one-line description) of a pydantic error, in words a params.yaml author understands."""
    loc = tuple(err["loc"])
    kind = err["type"]
    if kind == "extra_forbidden":
        parent = _model_at(root_model, loc[:-1])
        known = ", ".join(parent.model_fields) if parent is not None else ""
        return loc, "unknown key" + (f"; known keys here: {known}" if known else "")
    if kind == "missing":
        return loc, "missing (every knob lives in params.yaml)"
    if isinstance(err.get("input"), bool) and kind in ("int_type", "float_type"):
        return loc, f"a boolean is not a number (got {err['input']!r})"
    msg = err["msg"]
    if "input" in err and kind not in ("model_type", "dict_type", "list_type"):
        shown = repr(err["input"])
        msg += f" (got {shown if len(shown) <= 60 else shown[:57] + '...'})"
    return loc, msg


def short_text(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def _first_error(errors: list[dict[str, Any]]) -> dict[str, Any]:
    """The error to show: an unknown key before anything else (a misspelled key also makes its right spelling
    "missing", and the unknown one is what the author typed)."""
    unknown = [e for e in errors if e["type"] == "extra_forbidden"]
    return unknown[0] if unknown else errors[0]


def _did_you_mean(err: dict[str, Any], root_model: Any) -> str:
    import difflib

    parent = _model_at(root_model, tuple(err["loc"])[:-1])
    if err["type"] != "extra_forbidden" or parent is None:
        return ""
    close = difflib.get_close_matches(str(err["loc"][-1]), list(parent.model_fields), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def from_validation_error(exc: ValidationError, root_model: Any, prefix: tuple[Any, ...] = ()) -> ConfigError:
    errors = exc.errors()
    first = _first_error(errors)
    loc, problem = _problem(first, root_model)
    problem += _did_you_mean(first, root_model)
    if len(errors) > 1:
        problem += f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})"
    return ConfigError(_loc_text(prefix + loc), problem)


def fail(message: str, status: int = 1) -> NoReturn:
    """Print one ``error:`` line on stderr and exit (stage scripts never end with a bare traceback)."""
    print(f"error: {message}", file=sys.stderr, flush=True)
    raise SystemExit(status)
