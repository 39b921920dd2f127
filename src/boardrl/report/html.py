"""Render report blocks as self-contained HTML pages (reports/index.html, one ``<game>.html`` per game).

Every heading gets the id GitHub gives it in the Markdown (``document.anchors``), so a link inside the report
reaches the same heading in both formats.

Why the table rules: the widest tables (the reference systems' numbers beside ours: ten columns, long protocols, ids and
file paths) must fit a 1,400 px window with nothing cut off.  Long names in cells may wrap after ``_``, ``/``
and ``::`` (``<wbr>``), so a column can be as narrow as the pieces of ``dots_and_boxes_2x2`` rather than the
whole name, and a word still too wide breaks rather than runs into the next cell.  A number's cell breaks only
before its bracketed interval.  Each table sits in a
container that scrolls sideways on its own, should a narrow window not hold it, so the page never does.
``make report-check`` (``tools/browser.py``) measures this in headless Chromium.
"""

from __future__ import annotations

import re
from html import escape

from boardrl.report.document import (INDEX, Block, Bullets, Heading, Image, Inline, Paragraph, Span, Table, anchors,
                                     ref_href)

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
.table { max-width: 100%; overflow-x: auto; margin: 0.5rem 0 1.5rem; }
table { border-collapse: collapse; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; vertical-align: top; line-height: 1.3;
         overflow-wrap: break-word; }
th { background: #f3f3f3; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num .nw { white-space: nowrap; }
img { max-width: 100%; border: 1px solid #eee; margin: 0.5rem 0 1.5rem; }
code { background: #f6f6f6; padding: 0 0.2rem; }
a { color: #1558b0; }
"""


_LONG_WORD = re.compile(r"\S{13,}")
_BREAK_AFTER = re.compile(r"(::|[_/])(?=\S)")


def breakable(escaped: str) -> str:
    """Escaped text whose long words may wrap after ``_``, ``/`` and ``::`` (entities hold none of these)."""
    return _LONG_WORD.sub(lambda m: _BREAK_AFTER.sub(r"\1<wbr>", m.group()), escaped)


def _span(s: Span, here: str, wrap: bool = False) -> str:
    body = breakable(escape(s.text)) if wrap else escape(s.text)
    body = f"<code>{body}</code>" if s.code else body
    href = ref_href(s.ref, here, "html") if s.ref is not None else s.href
    if href is None:
        return body
    title = f' title="{escape(s.title)}"' if s.title else ""
    return f'<a href="{escape(href)}"{title}>{body}</a>'


def inline(spans: Inline, wrap: bool = False, here: str = INDEX) -> str:
    """Spans as HTML; links inside the report are relative to page ``here``."""
    return "".join(_span(s, here, wrap) for s in spans)


def _list(b: Bullets, here: str) -> str:
    tag = "ul" if b.start is None else "ol"
    start = f' start="{b.start}"' if b.start not in (None, 1) else ""
    return f"<{tag}{start}>\n" + "\n".join(f"<li>{inline(i, here=here)}</li>" for i in b.items) + f"\n</{tag}>"


_INTERVAL = re.compile(r"\[[^\]<>\"]*\]")


def _interval_apart(cell: str) -> str:
    """A number's cell may break before its bracketed interval and nowhere else: a wide table of rates with
    intervals (AlphaZero's ladder: six of them a row) then fits the page with the interval under its value."""
    return _INTERVAL.sub(lambda m: f'<span class="nw">{m.group(0)}</span>', cell)


def _table(t: Table, here: str) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in t.header)
    rows = []
    for row in t.rows:
        cells = "".join(
            f'<td class="num">{_interval_apart(inline(c, here=here))}</td>' if i in t.numeric
            else f"<td>{inline(c, wrap=True, here=here)}</td>"
            for i, c in enumerate(row)
        )
        rows.append(f"<tr>{cells}</tr>")
    return (f'<div class="table">\n<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n' + "\n".join(rows)
            + "\n</tbody>\n</table>\n</div>")


def render(blocks: list[Block], title: str, here: str = INDEX) -> str:
    """The HTML of page ``here`` (``INDEX``: index.html)."""
    ids = anchors(blocks)
    parts = []
    for n, b in enumerate(blocks):
        if isinstance(b, Heading):
            parts.append(f'<h{b.level} id="{escape(ids[n])}">{escape(b.text)}</h{b.level}>')
        elif isinstance(b, Paragraph):
            parts.append(f"<p>{inline(b.spans, here=here)}</p>")
        elif isinstance(b, Table):
            parts.append(_table(b, here))
        elif isinstance(b, Image):
            parts.append(f'<img src="{escape(b.path)}" alt="{escape(b.alt)}">')
        elif isinstance(b, Bullets):
            parts.append(_list(b, here))
        else:  # pragma: no cover
            raise TypeError(f"unknown block {type(b).__name__}")
    body = "\n".join(parts)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{escape(title)}</title>\n'
            f"<style>{STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")
