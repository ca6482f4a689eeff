"""``parlour serve``: the web app (play, watch, replay, leaderboard) on uvicorn."""

from __future__ import annotations

import argparse
import sys

from .common import Command, UsageError, non_negative_int


def cmd_serve(args: argparse.Namespace) -> int:
    """Check the arguments, open the database, import the records and serve."""
    try:
        import uvicorn

        from ..web.app import LOOPBACK_HOSTS, create_app
    except ImportError as err:
        raise UsageError(
            f"parlour serve needs the web extra ({err.name} is missing): "
            "pip install 'parlour[web]'"
        ) from None
    from ..paths import prepare_output_file
    from ..web.service import Parlour

    if args.port > 65535:
        raise UsageError(f"--port must be 0..65535, got {args.port}")
    prepare_output_file(args.db, what="--db")
    parlour = Parlour(args.db, args.models or (), args.records or ())
    loopback = args.host in ("127.0.0.1", "::1", "localhost")
    app = create_app(parlour, allowed_hosts=LOOPBACK_HOSTS if loopback else None)
    config = uvicorn.Config(
        app, host=args.host, port=args.port, log_level=args.log_level
    )
    server = uvicorn.Server(config)
    config.load()
    sock = config.bind_socket()
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"Parlour is serving at http://{shown}:{port}/ (database {args.db})")
    if parlour.imported:
        print(f"imported {parlour.imported} game records")
    if not loopback:
        print(
            f"warning: listening on {host}: anyone who can reach this machine can "
            "play here",
            file=sys.stderr,
        )
    sys.stdout.flush()
    server.run(sockets=[sock])
    return 0


def _serve_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``parlour serve``."""
    from ..web.store import DEFAULT_DB

    p.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (127.0.0.1)"
    )
    p.add_argument(
        "--port", type=non_negative_int, default=8000, help="port (8000; 0: any free)"
    )
    p.add_argument(
        "--db",
        default=DEFAULT_DB,
        metavar="PATH",
        help=f"the league database; the browser's games are stored there too; "
        f"missing folders are created ({DEFAULT_DB})",
    )
    p.add_argument(
        "--models",
        nargs="+",
        metavar="DIR",
        help="directories whose checkpoints the pages may choose (as model:NAME)",
    )
    p.add_argument(
        "--records",
        nargs="+",
        metavar="FILE",
        help="game records to import for replay (parlour arena --record JSONL, text "
        "play JSONL)",
    )
    p.add_argument(
        "--log-level",
        default="warning",
        choices=["critical", "error", "warning", "info", "debug"],
        help="uvicorn's log level (warning)",
    )


#: the subcommands of this module (`parlour.cli.build_parser` adds them)
COMMANDS = (
    Command(
        "serve",
        cmd_serve,
        help="the web app: play against the bots, watch, replay, leaderboard",
        description="Serve Parlour in the browser: play any game against the bots, "
        "watch bots play, replay stored games (league, browser, --records files) move "
        "by move, and read the league's leaderboard (docs/web.md). Needs the web "
        "extra.",
        arguments=_serve_arguments,
    ),
)
