"""Parlour in the browser (``parlour serve``): play against the bots, watch bots play,
replay stored games move by move, read the league's leaderboard.

- `Parlour`: the server's games (`parlour.web.service`), stored in the league's
  SQLite database (`parlour.web.store`), with agents from an allow-list
  (`parlour.web.allow`).
- `create_app(parlour)`: the Starlette app (`parlour.web.app`); `serve` runs it with
  uvicorn.

Needs the ``web`` extra (``pip install parlour[web]``). See ``docs/web.md``.
"""

from __future__ import annotations

from typing import Any


def __getattr__(attr: str) -> Any:
    # the app's modules import Starlette: loaded on first use, so that `parlour --help`
    # and the rest of Parlour work without the web extra
    if attr == "create_app":
        from .app import create_app

        return create_app
    if attr == "Parlour":
        from .service import Parlour

        return Parlour
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


__all__ = ["Parlour", "create_app"]
