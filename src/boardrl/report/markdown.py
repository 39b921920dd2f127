"""Render report blocks as GitHub-flavoured Markdown (reports/report.md and one ``<game>.md`` per game)."""

from __future__ import annotations

from boardrl.report.document import INDEX, Block, Bullets, Heading, Image, Inline, Paragraph, Span, Table, ref_href

# Escaped: what could start markup inside our texts.  Underscores inside names (tabular_q) and balanced
# brackets (intervals) are plain text in GitHub Markdown, so they stay readable in the raw file.
_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*<|"})


class _Links:
    """Reference-style links: ``[98.8%][r3]`` in the text, ``[r3]: url "title"`` once at the end.

    Every number links to its run, so inline links would bury the tables under URLs in the raw file.  ``here``:
    the page being rendered, which links inside the report are relative to.
    """

    def __init__(self, here: str = INDEX) -> None:
        self.here = here
        self.ids: dict[tuple[str, str | None], str] = {}

    def ref(self, href: str, title: str | None) -> str:
        return self.ids.setdefault((href, title), f"r{len(self.ids) + 1}")

    def definitions(self) -> list[str]:
        out = []
        for (href, title), ref in self.ids.items():
            t = f' "{title.replace(chr(34), chr(39))}"' if title else ""
            out.append(f"[{ref}]: <{href.replace('>', '%3E')}>{t}")
        return out


def _span(s: Span, links: _Links) -> str:
    if s.code:
        body = f"`{s.text.replace('`', '')}`"
    else:
        body = s.text.translate(_SPECIAL)
    href = ref_href(s.ref, links.here, "md") if s.ref is not None else s.href
    if href is None:
        return body
    return f"[{body}][{links.ref(href, s.title)}]"


def inline(spans: Inline, links: _Links) -> str:
    return "".join(_span(s, links) for s in spans).replace("\n", " ")


def _table(t: Table, links: _Links) -> list[str]:
    head = "| " + " | ".join(h.translate(_SPECIAL) for h in t.header) + " |"
    rule = "|" + "|".join("---:" if i in t.numeric else "---" for i in range(len(t.header))) + "|"
    body = ["| " + " | ".join(inline(c, links) for c in row) + " |" for row in t.rows]
    return [head, rule, *body]


def render(blocks: list[Block], here: str = INDEX) -> str:
    """The Markdown of page ``here`` (``INDEX``: report.md)."""
    links = _Links(here)
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            out.append("#" * b.level + " " + b.text.translate(_SPECIAL))
        elif isinstance(b, Paragraph):
            out.append(inline(b.spans, links))
        elif isinstance(b, Table):
            out.extend(_table(b, links))
        elif isinstance(b, Image):
            out.append(f"![{b.alt.translate(_SPECIAL)}]({b.path})")
        elif isinstance(b, Bullets):
            out.extend((f"{b.start + i}. " if b.start is not None else "- ") + inline(item, links)
                       for i, item in enumerate(b.items))
        else:  # pragma: no cover - the builder only makes the blocks above
            raise TypeError(f"unknown block {type(b).__name__}")
        out.append("")
    out.extend(links.definitions())
    return "\n".join(out).rstrip("\n") + "\n"
