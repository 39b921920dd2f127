"""The one base class of every user-facing boardrl error.

Why a module of its own: every layer (games, solvers, agents, learners, config, report) raises it, and none
of them should have to import the game interface to do so.  A ``BoardRLError`` message is one line that names
what was wrong and, where there is a choice, the legal choices; command-line entry points print it as
``error: <message>`` and exit non-zero instead of showing a traceback.
"""

from __future__ import annotations


class BoardRLError(ValueError):
    """Base class of every user-facing error: a one-line message that names what was wrong."""
