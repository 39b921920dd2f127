"""MkDocs hook: the parts of the documentation that come from the code and the params, filled in at build time.

A page asks for one with an HTML comment on a line of its own, ``<!-- boardrl:<kind> [name] -->``:

- ``cli``                 the command line reference: typer's own Markdown for the app (``typer <module> utils docs``);
- ``headline``            README's generated headline table (between its ``headline`` markers);
- ``params <learner>``    the learner's params with their defaults and descriptions (its pydantic model);
- ``experiments <learner>`` the experiments of params.yaml that use the learner, and what profiles/full.yaml changes;
- ``agents``              every agent name, the games it plays and the keys a spec may set;
- ``studies``             the studies of studies/*.yaml and the command that reruns each;
- ``study <name>``        one study's generated table (studies/<name>/results.md), for the page that discusses it,
                          and which of its rows ran with code, params or data this commit has changed.

Why: these facts live in the code and in params.yaml; a page that copied them would go stale without anyone
noticing.  An unknown kind or name, or a missing README block, fails the build.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from mkdocs.exceptions import PluginError

MARKER = re.compile(r"^<!-- boardrl:(\w+)(?: ([\w.-]+))? -->$", re.M)
GAMES = ("tictactoe", "connect4", "dots_and_boxes_2x2", "dots_and_boxes_3x3", "conniption")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    root = Path(config["config_file_path"]).resolve().parent
    return MARKER.sub(lambda m: _render(root, m.group(1), m.group(2), page.file.src_uri), markdown)


def _render(root: Path, kind: str, name: str | None, where: str) -> str:
    renderers = {"cli": _cli, "headline": _headline, "params": _params, "experiments": _experiments, "agents": _agents,
                 "studies": _studies, "study": _study}
    if kind not in renderers:
        raise PluginError(f"{where}: unknown generated block boardrl:{kind} (known: {', '.join(renderers)})")
    try:
        return renderers[kind](root, name)
    except PluginError:
        raise
    except Exception as exc:  # a page asking for a learner that does not exist, a params file that does not parse
        raise PluginError(f"{where}: boardrl:{kind} {name or ''}: {type(exc).__name__}: {exc}") from exc


def _code(value: Any) -> str:
    """A value as params.yaml writes it (flow-style YAML), in a code span, for a table cell."""
    flow = yaml.safe_dump(value, default_flow_style=True, width=10**6, sort_keys=False, allow_unicode=True)
    return _text(f"`{flow.strip().removesuffix('...').strip()}`")


def _text(text: str) -> str:
    """Plain text for a table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _cli(_: Path, __: str | None) -> str:
    import typer.main
    from typer.cli import get_docs_for_click
    from typer.core import MARKUP_MODE_KEY

    from boardrl.cli import app

    command = typer.main.get_command(app)
    ctx = typer.Context(command)
    ctx.ensure_object(dict)[MARKUP_MODE_KEY] = app.rich_markup_mode  # as `typer ... utils docs`: help text escaped
    return get_docs_for_click(obj=command, ctx=ctx, name="boardrl", indent=1).strip()


def _headline(root: Path, _: str | None) -> str:
    text = (root / "README.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- headline:start -->\n(.*?)<!-- headline:end -->", text, re.S)
    if not m:
        raise PluginError("README.md has no <!-- headline:start --> ... <!-- headline:end --> block")
    body = "\n".join(line for line in m.group(1).splitlines() if not line.startswith("<!--"))
    # README's links are relative to the repository root (the reports are not docs pages): shown as paths here
    return re.sub(r"\[([^\]]+)\]\(((?!https?:)[^)]+)\)", r"\1 (`\2`)", body)


def _params(_: Path, learner: str | None) -> str:
    from pydantic import BaseModel

    from boardrl.learn import learner_params_model

    model = learner_params_model(str(learner))
    rows = []
    for key, field in model.model_fields.items():
        default = field.default_factory() if field.default_factory is not None else field.default
        if isinstance(default, BaseModel):
            default = default.model_dump(mode="json")
        rows.append([f"`{key}`", _code(default), _text(field.description or "")])
    return _table(["param", "default", "meaning"], rows)


def _experiments(root: Path, learner: str | None) -> str:
    params = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    full = (yaml.safe_load((root / "profiles" / "full.yaml").read_text(encoding="utf-8")) or {}).get("experiments", {})
    rows = []
    defined = params.get("experiments") or {}
    for exp_id, exp in defined.items():
        if exp.get("learner") != learner:
            continue
        overlay = full.get(exp_id) or {}
        rows.append([f"`{exp_id}`", exp["game"], _code(exp.get("seeds", [0])), _code(exp.get("params") or {}),
                     _code(overlay) if overlay else ""])
    for exp_id, exp in full.items():  # experiments that only the full profile defines
        if exp_id not in defined and exp.get("learner") == learner:
            rows.append([f"`{exp_id}`", exp["game"], _code(exp.get("seeds", [0])), _code(exp.get("params") or {}),
                         "defined in the full profile only"])
    if not rows:
        raise PluginError(f"neither params.yaml nor profiles/full.yaml has an experiment with learner {learner!r}")
    return _table(["experiment", "game", "seeds", "params (beside the defaults)", "profile full changes"], rows)


def _agents(_: Path, __: str | None) -> str:
    from boardrl.agents import agent_keys, agent_names

    games: dict[str, list[str]] = {}
    keys: dict[str, set[str]] = {}
    for game in GAMES:
        for name in agent_names(game):
            games.setdefault(name, []).append(game)
            keys.setdefault(name, set()).update(agent_keys(game, name))
    rows = [[f"`{name}`", ", ".join(g) if len(g) < len(GAMES) else "every game",
             ", ".join(f"`{k}`" for k in sorted(keys[name])) or "none"] for name, g in games.items()]
    return _table(["name", "games", "spec keys"], rows)


def _studies(root: Path, _: str | None) -> str:
    """The studies' table, then the results table of each study that has been run (its committed results.json)."""
    rows = []
    for path in sorted((root / "studies").glob("*.yaml")):
        study = yaml.safe_load(path.read_text(encoding="utf-8"))
        ran = (path.parent / path.stem / "results.json").is_file()
        rows.append([f"`{path.stem}`", _text(str(study.get("description", ""))),
                     ", ".join(f"`{v}`" for v in study.get("variations", {})),
                     f"`make study NAME={path.stem}`", "below" if ran else "not run yet"])
    results = [_study(root, p.parent.name) for p in sorted((root / "studies").glob("*/results.md"))]
    return "\n\n".join([_table(["study", "what it compares", "variations", "rerun", "results"], rows), *results])


def _study(root: Path, name: str | None) -> str:
    """One study's results table, so that a page discussing a study shows its numbers instead of copying them.

    Rendered from the committed rows (``results.json``) as ``results.md`` is, but with the note of which rows this
    commit would rerun computed now: ``results.md``'s own note is that of the commit that collected it."""
    results = root / "studies" / str(name) / "results.json"
    if not (root / "studies" / f"{name}.yaml").is_file() or not results.is_file():
        raise FileNotFoundError(f"no studies/{name}.yaml with results (studies/{name}/results.json)")
    from boardrl.experiments.study import committed_rows
    from boardrl.experiments.study_freshness import freshness, freshness_note
    from boardrl.experiments.study_spec import load_study
    from boardrl.experiments.study_table import markdown

    study = load_study(root, str(name))
    return _demoted(markdown(study, committed_rows(root, study), freshness_note(study.name, freshness(root, study))))


def _demoted(markdown: str) -> str:
    """A results.md under this page's headings: each heading two levels down."""
    return "\n".join(f"##{line}" if line.startswith("#") else line for line in markdown.splitlines())
