"""The report as data: headings, paragraphs, tables, images and lists built once, rendered twice.

Why: the Markdown report and the HTML page must say the same thing.  The builder produces one list of blocks;
``markdown.render`` and ``html.render`` only decide how each block looks, so the two cannot drift apart.
Text is kept raw here; each renderer escapes it for its own format.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union


@dataclass(frozen=True)
class Span:
    """A run of text, optionally a link (``href``) with a tooltip (``title``)."""

    text: str
    href: str | None = None
    title: str | None = None
    code: bool = False


Inline = list[Span]


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    anchor: str | None = None


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


Block = Union[Heading, Paragraph, Table, Image, Bullets]


def text(*parts: str | Span) -> Inline:
    """An inline run from plain strings and spans."""
    return [p if isinstance(p, Span) else Span(p) for p in parts]
