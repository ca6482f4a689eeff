"""The Starlette app: server-rendered pages over `parlour.web.service.Parlour`.

Routes (docs/web.md):

- ``GET /``: forms to play, watch and replay; the latest games.
- ``GET /play/<env>?opponent=SPEC&o=KEY=VALUE&seat=N``: start a game, go to its page.
- ``GET /game/<id>``, ``POST /game/<id>/move`` (``action``, ``ply``): play it.
- ``GET /watch/<env>?agent=SPEC&agent=SPEC``: bots play a game; its replay autoplays.
- ``GET /replay/<id>?move=K&view=open|SEAT``: a finished game move by move.
- ``GET /leaderboard/<env>``: the league's table and rating plot.
- ``GET /healthz``: ``ok``.

Bad input is answered with a 4xx page that says what was wrong in one line; an
unexpected error with a 500 page (the server keeps serving either way).
"""

from __future__ import annotations

import base64
import logging
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from .. import envs
from ..cli.common import UsageError, parse_options
from .games import open_page, seat_page
from .service import HUMAN, Conflict, NotFound, Parlour, known_env

log = logging.getLogger("parlour.web")

#: the most query values of one name a request may carry (options, agents)
MAX_VALUES = 16
#: the longest query value read
MAX_VALUE_LEN = 200

_templates = Environment(
    loader=PackageLoader("parlour.web", "templates"),
    autoescape=select_autoescape(["html"]),
)


def _page(name: str, status: int = 200, **context: Any) -> HTMLResponse:
    html = _templates.get_template(name).render(**context)
    return HTMLResponse(html, status_code=status)


def _values(request: Request, key: str) -> list[str]:
    values = request.query_params.getlist(key)
    if len(values) > MAX_VALUES:
        raise ValueError(f"at most {MAX_VALUES} {key!r} values, got {len(values)}")
    for v in values:
        if len(v) > MAX_VALUE_LEN:
            raise ValueError(f"a {key!r} value is longer than {MAX_VALUE_LEN} chars")
    return [v.strip() for v in values if v.strip()]


def _int(request: Request, key: str, default: int | None) -> int | None:
    raw = request.query_params.get(key, "")
    if not raw.strip():
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"{key} must be an integer, got {raw[:40]!r}") from None


def _options(request: Request) -> dict[str, Any]:
    pairs: list[str] = []
    for value in _values(request, "o"):
        pairs += value.split()  # one box may hold several KEY=VALUE
    try:
        return parse_options(pairs)
    except UsageError as err:
        raise ValueError(str(err)) from None


def create_app(
    parlour: Parlour, allowed_hosts: Sequence[str] | None = None
) -> Starlette:
    """The web app serving ``parlour``'s games; with ``allowed_hosts``, a request
    whose Host header names another host gets a 400 (a page on another site cannot
    reach a loopback server through a DNS name of its own)."""
    plots: dict[tuple[str, int], str] = {}
    plot_lock = threading.Lock()

    def index(request: Request) -> HTMLResponse:
        store = parlour.store
        games = [
            {
                "id": r["id"],
                "kind": r["kind"],
                "env": r["env"],
                "seats": r["seats"],
                "over": r["scores"] is not None,
            }
            for r in store.recent(30)
        ]
        return _page(
            "index.html",
            games=games,
            envs=[(r.name, r.title) for r in envs.records()],
            variants={r.name: r.variants for r in envs.records()},
            choices={name: parlour.allow.choices(name) for name in envs.names()},
            league_envs=store.league_envs(),
            league_games=store.league_games(20),
            imported=parlour.imported,
        )

    def form_to(page: str, key: str):
        """``GET /PAGE?KEY=X&…`` (a form on the start page) -> ``/PAGE/X?…``."""

        def redirect(request: Request) -> RedirectResponse:
            value = request.query_params.get(key, "").strip()
            if not value:
                raise ValueError(f"the form needs a {key}")
            if key == "env":
                known_env(value)
            rest = [(k, v) for k, v in request.query_params.multi_items() if k != key]
            query = f"?{urlencode(rest)}" if rest else ""
            return RedirectResponse(f"/{page}/{quote(value, safe='')}{query}", 303)

        return redirect

    def play(request: Request) -> RedirectResponse:
        env_name = known_env(request.path_params["env"])
        live = parlour.new_game(
            env_name,
            _options(request),
            _values(request, "opponent"),
            seat=_int(request, "seat", 0),
        )
        return RedirectResponse(f"/game/{live.id}", 303)

    def game(request: Request) -> HTMLResponse:
        live = parlour.game(request.path_params["id"])
        with live.lock:
            page = seat_page(live.table, live.human, since=live.since())
        return _page(
            "game.html",
            game=live,
            page=page,
            title=envs.record(live.env_name).title,
            bots=[(s, spec) for s, spec in enumerate(live.seats) if spec != HUMAN],
        )

    async def move(request: Request) -> Any:
        form = await request.form()
        name = str(form.get("action", ""))
        try:
            ply = int(str(form.get("ply", "")))
        except ValueError:
            raise ValueError("the move's form has no ply (reload the page)") from None
        if not name or len(name) > MAX_VALUE_LEN:
            raise ValueError("the move's form names no action")
        from starlette.concurrency import run_in_threadpool

        game_id = request.path_params["id"]
        await run_in_threadpool(parlour.move, game_id, name, ply)
        return RedirectResponse(f"/game/{game_id}", 303)

    def watch(request: Request) -> RedirectResponse:
        env_name = known_env(request.path_params["env"])
        specs: list[str] = []
        for value in _values(request, "agent"):
            specs += value.split()
        game_id = parlour.watch(env_name, _options(request), specs)
        return RedirectResponse(f"/replay/{game_id}?view=open&autoplay=1", 303)

    def replay(request: Request) -> HTMLResponse:
        row = parlour.replay_game(request.path_params["id"])
        total = len(row["moves"])
        k = _int(request, "move", 0)
        if not 0 <= k <= total:
            raise ValueError(f"move must be 0..{total}, got {k}")
        view = request.query_params.get("view", "open") or "open"
        table = parlour.replay_table(row, k)
        n = table.game.num_players
        if view != "open":
            if not view.isdigit() or int(view) >= n:
                raise ValueError(f"view must be 'open' or a seat 0..{n - 1}")
        frame = open_page(table, None if view == "open" else int(view))
        last = table.moves[-1] if table.moves else None
        return _page(
            "replay.html",
            row=row,
            frame=frame,
            move=k,
            total=total,
            view=view,
            seats=list(range(n)),
            last=last,
            title=envs.record(row["env"]).title,
            autoplay=request.query_params.get("autoplay") == "1",
        )

    def leaderboard(request: Request) -> HTMLResponse:
        env_name = request.path_params["env"]
        boards = parlour.leaderboards(env_name)
        shown = []
        for board in boards:
            key = (env_name + repr(board.options), board.games)
            with plot_lock:
                if key not in plots:
                    plots[key] = _plot_uri(board)
            shown.append({"board": board, "plot": plots[key]})
        return _page(
            "leaderboard.html",
            env=env_name,
            title=envs.record(env_name).title,
            boards=shown,
        )

    def healthz(request: Request) -> PlainTextResponse:
        return PlainTextResponse("ok")

    def error(status: int, message: str) -> HTMLResponse:
        return _page("error.html", status=status, code=status, message=message)

    async def on_value_error(request: Request, exc: Exception) -> HTMLResponse:
        return error(400, str(exc))

    async def on_not_found(request: Request, exc: Exception) -> HTMLResponse:
        return error(404, str(exc))

    async def on_conflict(request: Request, exc: Exception) -> HTMLResponse:
        return error(409, str(exc))

    async def on_http(request: Request, exc: Exception) -> HTMLResponse:
        assert isinstance(exc, HTTPException)
        message = {404: "no such page", 405: "method not allowed"}.get(
            exc.status_code, str(exc.detail)
        )
        return error(exc.status_code, f"{message}: {request.url.path}")

    async def on_crash(request: Request, exc: Exception) -> HTMLResponse:
        log.exception("error serving %s", request.url.path, exc_info=exc)
        return error(500, f"the server failed on this request ({type(exc).__name__})")

    routes = [
        Route("/", index),
        Route("/healthz", healthz),
        Route("/play", form_to("play", "env")),
        Route("/watch", form_to("watch", "env")),
        Route("/replay", form_to("replay", "id")),
        Route("/play/{env}", play),
        Route("/game/{id}", game),
        Route("/game/{id}/move", move, methods=["POST"]),
        Route("/watch/{env}", watch),
        Route("/replay/{id}", replay),
        Route("/leaderboard/{env}", leaderboard),
        Mount("/static", StaticFiles(packages=[("parlour.web", "static")])),
    ]
    # the order matters: Conflict is a ValueError, NotFound a LookupError
    handlers = {
        Conflict: on_conflict,
        NotFound: on_not_found,
        ValueError: on_value_error,
        HTTPException: on_http,
        Exception: on_crash,
    }
    middleware = []
    if allowed_hosts is not None:
        middleware.append(
            Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))
        )
    app = Starlette(routes=routes, exception_handlers=handlers, middleware=middleware)
    app.state.parlour = parlour
    return app


@contextmanager
def running(app: Starlette, host: str = "127.0.0.1") -> Iterator[str]:
    """Serve ``app`` with uvicorn in a thread on a free port of ``host``; yields the
    base URL and stops the server on exit (the tests' and the load test's server)."""
    import socket

    import uvicorn

    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.bind((host, 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            sock.close()
            raise RuntimeError("the web server did not start")
        time.sleep(0.01)
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


def _plot_uri(board: Any) -> str:
    """The board's rating plot as a data URI (an SVG drawn by `Leaderboard.plot`)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = board.plot(Path(tmp) / "ratings.svg")
        data = path.read_bytes()
    return "data:image/svg+xml;base64," + base64.b64encode(data).decode()


#: the names a loopback server answers to
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")

__all__ = ["LOOPBACK_HOSTS", "create_app", "running"]
