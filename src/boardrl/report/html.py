"""Render report blocks as one self-contained HTML page (reports/index.html) that links the figures."""

from __future__ import annotations

from html import escape

from boardrl.report.document import Block, Bullets, Heading, Image, Inline, Paragraph, Span, Table

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; vertical-align: top; }
th { background: #f3f3f3; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
img { max-width: 100%; border: 1px solid #eee; margin: 0.5rem 0 1.5rem; }
code { background: #f6f6f6; padding: 0 0.2rem; }
a { color: #1558b0; }
"""


def _span(s: Span) -> str:
    body = f"<code>{escape(s.text)}</code>" if s.code else escape(s.text)
    if s.href is None:
        return body
    title = f' title="{escape(s.title)}"' if s.title else ""
    return f'<a href="{escape(s.href)}"{title}>{body}</a>'


def inline(spans: Inline) -> str:
    return "".join(_span(s) for s in spans)


def _table(t: Table) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in t.header)
    rows = []
    for row in t.rows:
        cells = "".join(
            f'<td class="num">{inline(c)}</td>' if i in t.numeric else f"<td>{inline(c)}</td>"
            for i, c in enumerate(row)
        )
        rows.append(f"<tr>{cells}</tr>")
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody>\n</table>"


def render(blocks: list[Block], title: str) -> str:
    parts = []
    for b in blocks:
        if isinstance(b, Heading):
            anchor = f' id="{escape(b.anchor)}"' if b.anchor else ""
            parts.append(f"<h{b.level}{anchor}>{escape(b.text)}</h{b.level}>")
        elif isinstance(b, Paragraph):
            parts.append(f"<p>{inline(b.spans)}</p>")
        elif isinstance(b, Table):
            parts.append(_table(b))
        elif isinstance(b, Image):
            parts.append(f'<img src="{escape(b.path)}" alt="{escape(b.alt)}">')
        elif isinstance(b, Bullets):
            parts.append("<ul>\n" + "\n".join(f"<li>{inline(i)}</li>" for i in b.items) + "\n</ul>")
        else:  # pragma: no cover
            raise TypeError(f"unknown block {type(b).__name__}")
    body = "\n".join(parts)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{escape(title)}</title>\n'
            f"<style>{STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")
