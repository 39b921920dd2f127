"""Params profiles: `make repro PROFILE=tiny|full` as DVC experiments whose results stay apart.

A profile is an overlay in ``profiles/<name>.yaml`` with the same keys as params.yaml, listing only what differs
(dicts merge key by key; lists and values replace), plus an optional ``drop:`` list of dotted keys the profile
removes (e.g. ``experiments.<id>``: a quick profile that leaves out some experiments; passed as ``-S ~key``).
``default`` is params.yaml itself and runs ``dvc repro``.
Any other profile runs ``dvc exp run --temp --name <profile>-<time>`` with every overlay value as a ``-S`` override
(and ``profile=<name>``), so its params, outputs and report are a DVC experiment of their own: ``dvc exp show``
lists it beside the workspace, ``dvc exp apply <name>`` brings it into the workspace, and MLflow runs carry the
profile tag.  Before anything runs, params.yaml with the overlay applied is validated: a problem is one line,
exit 2, before DVC prints anything.

    python -m boardrl.experiments.profiles check tiny          # validate only
    python -m boardrl.experiments.profiles run tiny [--workspace] [--name NAME]
"""

from __future__ import annotations

import argparse
import copy
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from boardrl.config import EXIT_BAD_PARAMS, ConfigError, fail, parse_params, read_yaml

DEFAULT = "default"
PROFILES_DIR = "profiles"
DROP = "drop"  # overlay key: dotted params keys the profile removes


def overlay_path(root: Path, name: str) -> Path:
    return Path(root) / PROFILES_DIR / f"{name}.yaml"


def load_overlay(root: Path, name: str) -> dict[str, Any]:
    """The overlay of profile ``name`` ({} for default); ``ConfigError`` naming the known profiles otherwise."""
    if name == DEFAULT:
        return {}
    path = overlay_path(root, name)
    if not path.is_file():
        known = sorted([DEFAULT] + [p.stem for p in (Path(root) / PROFILES_DIR).glob("*.yaml")])
        raise ConfigError("", f"unknown profile {name!r}; profiles: {', '.join(known)}", file="PROFILE")
    data = read_yaml(path) or {}
    if not isinstance(data, dict):
        raise ConfigError("", "the top level must be a mapping of params.yaml keys", file=path.name)
    drop = data.get(DROP, [])
    if not isinstance(drop, list) or not all(isinstance(k, str) and k for k in drop):
        raise ConfigError(DROP, "must be a list of dotted params keys, e.g. experiments.<id>", file=path.name)
    return {**data, "profile": name}


def drop_keys(data: dict[str, Any], keys: list[str], file: str) -> dict[str, Any]:
    """``data`` without the dotted ``keys`` (each must exist: a typo would silently keep the experiment)."""
    out = copy.deepcopy(data)
    for key in keys:
        *parents, last = key.split(".")
        node = out
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
        if not isinstance(node, dict) or last not in node:
            raise ConfigError(DROP, f"{key!r} is not a key of params.yaml", file=file)
        del node[last]
    return out


def merge(base: Any, overlay: Any) -> Any:
    """``base`` with ``overlay`` applied: dicts merge key by key, anything else replaces."""
    if isinstance(base, dict) and isinstance(overlay, dict):
        out = copy.deepcopy(base)
        for k, v in overlay.items():
            out[k] = merge(out.get(k), v)
        return out
    return copy.deepcopy(overlay)


def effective_params(root: Path, name: str) -> dict[str, Any]:
    """params.yaml with the profile's overlay applied, validated (``ConfigError`` naming the key otherwise)."""
    overlay = load_overlay(root, name)
    drop = overlay.pop(DROP, [])
    data = drop_keys(merge(read_yaml(Path(root) / "params.yaml"), overlay), drop, f"{PROFILES_DIR}/{name}.yaml")
    try:
        parse_params(data)
    except ConfigError as exc:
        file = "params.yaml" if name == DEFAULT else f"params.yaml + {PROFILES_DIR}/{name}.yaml"
        raise ConfigError(exc.key, exc.problem, file=file) from None
    return data


def leaves(tree: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """(dotted key, value) of every leaf of the overlay; lists are leaves (they replace)."""
    out = []
    for k, v in tree.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and v:
            out += leaves(v, key + ".")
        else:
            out.append((key, v))
    return out


def hydra_value(value: Any) -> str:
    """A value in the override grammar ``dvc exp run -S`` reads (Hydra's): strings quoted, lists and dicts inline."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):  # Hydra escapes only backslashes before a quote or the end, then quotes
        return "'" + re.sub(r"(\\+)(?='|$)", r"\1\1", value).replace("'", "\\'") + "'"
    if isinstance(value, list):
        return "[" + ",".join(hydra_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{hydra_value(v)}" for k, v in value.items()) + "}"
    raise ConfigError("", f"cannot pass a {type(value).__name__} to dvc exp run -S", file="profile")


def set_args(overlay: dict[str, Any]) -> list[str]:
    """``-S ++key=value`` for every leaf (``++`` adds the key when params.yaml lacks it), ``-S ~key`` for each
    dropped key."""
    overlay = dict(overlay)
    args = []
    for key in overlay.pop(DROP, []):
        args += ["-S", f"~{key}"]
    for key, value in leaves(overlay):
        args += ["-S", f"++{key}={hydra_value(value)}"]
    return args


def dvc_command(root: Path, name: str, workspace: bool = False, exp_name: str | None = None) -> list[str]:
    """The command that runs profile ``name``: ``dvc repro`` for default, else a DVC experiment."""
    if name == DEFAULT:
        return ["dvc", "repro"]
    exp_name = exp_name or f"{name}-{time.strftime('%Y%m%d-%H%M%S')}"
    return ["dvc", "exp", "run", *([] if workspace else ["--temp"]), "--name", exp_name,
            *set_args(load_overlay(root, name))]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m boardrl.experiments.profiles", description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=("check", "run", "args"))
    ap.add_argument("profile")
    ap.add_argument("--root", type=Path, default=Path.cwd())
    ap.add_argument("--workspace", action="store_true", help="run in the workspace instead of a temp copy")
    ap.add_argument("--name", help="DVC experiment name (default <profile>-<date>-<time>)")
    args = ap.parse_args(argv)
    try:
        effective_params(args.root, args.profile)
        if args.action == "check":
            return
        cmd = dvc_command(args.root, args.profile, args.workspace, args.name)
    except ConfigError as exc:
        fail(str(exc), EXIT_BAD_PARAMS)
    if args.action == "args":
        print(" ".join(cmd))
        return
    if shutil.which(cmd[0]) is None:
        fail(f"{cmd[0]!r} is not on PATH; run through `make repro` (it puts the project's .venv/bin first)")
    print("+ " + " ".join(cmd[:6]) + (" -S ..." if len(cmd) > 6 else ""), file=sys.stderr, flush=True)
    raise SystemExit(subprocess.call(cmd, cwd=args.root, env=os.environ.copy()))


if __name__ == "__main__":
    main()
