"""Adapters that present boardrl games to other RL ecosystems, so users can bring their own agents and libraries.

Each adapter lives in its own submodule and imports its third-party library only there, so ``import
boardrl.interop`` costs nothing and the libraries stay an optional extra (``pip install 'boardrl[interop]'``):

* ``boardrl.interop.pettingzoo``: a PettingZoo AEC environment for every game id (``env(game_id)``).
"""
