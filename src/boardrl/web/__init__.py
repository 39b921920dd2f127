"""Play in the browser: ``boardrl serve`` (``make play``) starts a local web app on 127.0.0.1.

``app.py`` holds the routes, ``positions.py`` the move strings and board views, ``analysis.py`` what the
referee says about moves, ``jobs.py`` the referee's worker processes, ``cache.py`` the solved positions kept on
disk across restarts, ``players.py`` the opponents, and ``static/`` the page (HTML, CSS and vanilla JavaScript,
no build step).
"""

from boardrl.web.app import create_app, serve

__all__ = ["create_app", "serve"]
