"""The machinery every learner shares, apart from the algorithms in ``learn/``: the ``Learner`` contract and its
training loop (``base``), checkpoints, replay memories, fixed-opponent and league games, the torch device and
threads, and the search-space primitives learners declare for sweeps.

Why a package of its own: a reader of ``learn/`` finds the algorithms there and the parts they are built from
here, and the learner registry (``learn/__init__.py``) looks for learners in ``learn/`` only.
"""
