"""The report as data: headings, paragraphs, tables, images and lists built once, rendered twice.

Why: the Markdown report and the HTML pages must say the same thing.  The builder produces one list of blocks
per page; ``markdown.render`` and ``html.render`` only decide how each block looks, so the two cannot drift
apart.  Text is kept raw here; each renderer escapes it for its own format.

Links inside the report (``Ref``: a page and a heading's anchor) are resolved by each renderer to its own files
(``tictactoe.md#x`` in Markdown, ``tictactoe.html#x`` in HTML).  Anchors are GitHub's heading slugs (``slug``,
duplicates numbered as GitHub numbers them), and the HTML page gives its headings the same ids, so one ``Ref``
lands on the same heading in both formats without any raw HTML in the Markdown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Union

#: The report's first page: ``report.md`` / ``index.html``; every other page is ``<page>.md`` / ``<page>.html``.
INDEX = "index"
INDEX_FILES = {"md": "report.md", "html": "index.html"}


@dataclass(frozen=True)
class Ref:
    """A place in the report: a page and, optionally, the anchor of a heading on it."""

    page: str
    anchor: str | None = None


@dataclass(frozen=True)
class Span:
    """A run of text, optionally a link (``href`` outside the report, ``ref`` inside it) with a tooltip."""

    text: str
    href: str | None = None
    title: str | None = None
    code: bool = False
    ref: Ref | None = None


Inline = list[Span]


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Paragraph:
    spans: Inline


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[Inline]]
    numeric: frozenset[int] = field(default_factory=frozenset)  # column indices aligned right


@dataclass(frozen=True)
class Image:
    path: str  # relative to the report directory
    alt: str


@dataclass(frozen=True)
class Bullets:
    items: list[Inline]
    start: int | None = None  # numbered from ``start`` (footnotes that continue across lists); None: bullets


Block = Union[Heading, Paragraph, Table, Image, Bullets]


@dataclass(frozen=True)
class Page:
    """One file pair of the report: ``key`` names it (``INDEX`` or a game), ``title`` is the HTML title."""

    key: str
    title: str
    blocks: list[Block]


def text(*parts: str | Span) -> Inline:
    """An inline run from plain strings and spans."""
    return [p if isinstance(p, Span) else Span(p) for p in parts]


# ---------------------------------------------------------------------------------------------- anchors and links
_NOT_IN_SLUG = re.compile(r"[^\w\- ]")


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation other than ``-`` and ``_`` dropped, spaces as ``-``."""
    return _NOT_IN_SLUG.sub("", heading.lower()).replace(" ", "-")


def anchors(blocks: list[Block]) -> dict[int, str]:
    """The anchor of each heading, by its index in ``blocks``: its slug, numbered ``-1``, ``-2`` ... when an
    earlier heading of the page took it (GitHub's rule, so Markdown viewers agree with the HTML ids)."""
    taken: set[str] = set()
    out: dict[int, str] = {}
    for i, b in enumerate(blocks):
        if not isinstance(b, Heading):
            continue
        base = found = slug(b.text)
        n = 0
        while found in taken:
            n += 1
            found = f"{base}-{n}"
        taken.add(found)
        out[i] = found
    return out


def page_file(page: str, ext: str) -> str:
    """The file a page is written to in format ``ext`` (``md`` or ``html``)."""
    return INDEX_FILES[ext] if page == INDEX else f"{page}.{ext}"


def ref_href(ref: Ref, here: str, ext: str) -> str:
    """``ref`` as a relative link from page ``here`` in format ``ext`` (pages share one directory)."""
    where = "" if ref.page == here and ref.anchor else page_file(ref.page, ext)
    return where + (f"#{ref.anchor}" if ref.anchor else "")
