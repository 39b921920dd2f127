"""Reading params.yaml: YAML without duplicate keys, validated whole (``load_params``, ``parse_params``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from boardrl.config.checks import cross_check
from boardrl.config.errors import (
    EXIT_BAD_PARAMS,
    PARAMS_FILE,
    ConfigError,
    from_validation_error,
    fail,
)
from boardrl.config.schema import Params
from pydantic import ValidationError


# ---------------------------------------------------------------------------------------------- loading
def parse_params(data: Any, only_experiment: str | None = None) -> Params:
    """Validate already-loaded YAML data; ``ConfigError`` with the key path of the first problem.

    ``only_experiment``: check only what that experiment's stages read (see ``cross_check``)."""
    if not isinstance(data, dict):
        raise ConfigError("", f"the top level must be a mapping of sections, got {type(data).__name__}")
    try:
        params = Params.model_validate(data)
    except ValidationError as exc:
        raise from_validation_error(exc, Params) from None
    cross_check(params, only_experiment)
    return params


def read_yaml(path: str | Path) -> Any:
    """The YAML data of ``path``; ``ConfigError`` (one line, with the line number) when unreadable."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError("", f"cannot read {p}: {exc.strerror or exc}", file=p.name) from None
    try:
        return _load_unique(text, p.name)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError("", f"not valid YAML: {where}{problem}", file=p.name) from None


def _load_unique(text: str, file: str) -> Any:
    """``yaml.safe_load`` that refuses a key given twice in one mapping.

    Why: YAML says keys are unique, but PyYAML keeps the last silently, so an edit below an older value of the
    same key (a second ``games:``) would change nothing, and DVC, which refuses such a file, fails later with a
    message of many lines.  The nodes are checked before they are built, so the error names the key's path."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_unique_keys(node, "", set(), file)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _check_unique_keys(node: yaml.Node, path: str, seen: set[int], file: str) -> None:
    if id(node) in seen:  # an alias: checked where its anchor stands
        return
    seen.add(id(node))
    if isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _check_unique_keys(item, f"{path}[{i}]", seen, file)
    elif isinstance(node, yaml.MappingNode):
        first: dict[tuple[str, str], int] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                continue
            where = f"{path}.{key_node.value}" if path else key_node.value
            line = key_node.start_mark.line + 1
            ident = (key_node.tag, key_node.value)
            if ident in first:
                raise ConfigError(where, f"key given twice (lines {first[ident]} and {line}); YAML allows a key "
                                  "once per mapping: keep one", file=file)
            first[ident] = line
            _check_unique_keys(value_node, where, seen, file)


def load_params(path: str | Path = PARAMS_FILE, only_experiment: str | None = None) -> Params:
    """Read and validate a params file; ``ConfigError`` (one line, with the key path) on any problem."""
    data = read_yaml(path)
    try:
        return parse_params(data, only_experiment)
    except ConfigError as exc:
        raise ConfigError(exc.key, exc.problem, file=Path(path).name) from None


def load_params_or_exit(path: str | Path = PARAMS_FILE, only_experiment: str | None = None) -> Params:
    """``load_params`` for stage scripts: on a problem print ``error: ...`` (one line) and exit with status 2."""
    try:
        return load_params(path, only_experiment)
    except ConfigError as exc:
        fail(str(exc), EXIT_BAD_PARAMS)
