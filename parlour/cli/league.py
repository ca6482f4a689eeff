"""``parlour league``: play and store a league's games; ``league show``: the board."""

from __future__ import annotations

import argparse
import sys

from .. import versions
from .common import (
    Command,
    UsageError,
    add_executor_args,
    check_executor,
    parse_options,
    positive_int,
)


def cmd_league(args: argparse.Namespace) -> int:
    """``parlour league ENV --agents …`` plays and stores games; ``parlour league show
    ENV`` prints (and draws) the leaderboard fitted from the stored games."""
    import json

    from .. import league
    from ..paths import prepare_output_file

    words = list(args.words)
    show = words[0] == "show"
    if show:
        words = words[1:]
    if len(words) != 1:
        raise UsageError(
            "write 'parlour league ENV --agents SPEC...' or 'parlour league show ENV'"
        )
    env_name = words[0]
    options = parse_options(args.option)
    if show and args.agents:
        raise UsageError("'league show' takes no --agents (it reads the database)")
    if not show and not args.agents:
        raise UsageError("give the league's agents: --agents SPEC SPEC ...")
    check_executor(args)
    if args.plot is not None:
        if not args.plot.lower().endswith((".png", ".svg", ".pdf")):
            raise UsageError(
                f"--plot wants a .png, .svg or .pdf file, got {args.plot!r}"
            )
        prepare_output_file(args.plot, what="--plot")
    if not show:
        # 'show' only reads the database; a league writes it (and its WAL files)
        prepare_output_file(args.db, what="--db")
    if not show:
        run = league.run_league(
            env_name,
            args.agents,
            games=args.games,
            db=args.db,
            env_options=options,
            executor=args.executor,
            address=args.address,
            progress=not args.quiet,
        )
        state = "interrupted: kept" if run.interrupted else "stored"
        print(
            f"{state} {run.stored} of {run.planned} games "
            f"({len(run.tables)} tables) in {args.db}",
            file=sys.stderr if args.json or run.interrupted else sys.stdout,
        )
        if run.interrupted:
            print(
                f"the table: parlour league show {env_name} --db {args.db}",
                file=sys.stderr,
            )
            return 130
    # a league shows its own option set; 'show' without -o every option set stored
    wanted = options if args.option or not show else None
    boards = league.leaderboards(args.db, env_name, wanted)
    if args.json:
        stamped = [{**versions(b.env_name), **b.as_dict()} for b in boards]
        print(json.dumps(stamped, indent=2))
    elif args.markdown:
        print("\n\n".join(f"{b.title()}\n\n{b.markdown()}" for b in boards))
    else:
        print("\n\n".join(b.table() for b in boards))
    if args.plot:
        for i, board in enumerate(boards):
            path = args.plot if i == 0 else f"{args.plot[:-4]}-{i}{args.plot[-4:]}"
            print(f"wrote {board.plot(path)}", file=sys.stderr)
    return 0


def _league_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``parlour league``."""
    from ..league import DEFAULT_DB

    p.add_argument("words", nargs="+", metavar="[show] ENV", help="environment name")
    p.add_argument(
        "-o",
        "--option",
        action="append",
        metavar="KEY=VALUE",
        help="environment option, repeatable (show: only that option set)",
    )
    p.add_argument("--agents", nargs="+", metavar="SPEC", help="the agents' specs")
    p.add_argument(
        "--games",
        type=positive_int,
        default=20,
        help="games per table this run, rounded up to whole deals (20)",
    )
    p.add_argument(
        "--db",
        default=DEFAULT_DB,
        metavar="PATH",
        help=f"database; missing folders are created ({DEFAULT_DB})",
    )
    add_executor_args(p, "batches of games")
    p.add_argument(
        "--plot",
        metavar="FILE",
        help="draw the ratings (.png; missing folders are created)",
    )
    p.add_argument("--json", action="store_true", help="print the leaderboard as JSON")
    p.add_argument(
        "--markdown", action="store_true", help="print the leaderboard as Markdown"
    )


#: the subcommands of this module (`parlour.cli.build_parser` adds them)
COMMANDS = (
    Command(
        "league",
        cmd_league,
        help="rate many agents on one table: duplicate deals, SQLite, openskill",
        description="'parlour league ENV --agents A B C' plays every table of the "
        "agents (every pair; tables of 3-6 sides seat them in rotation) on duplicate "
        "deals in every seating and appends each game to a SQLite database; a re-run "
        "adds new deals. 'parlour league show ENV' prints the leaderboard fitted from "
        "the stored games: openskill Plackett-Luce ratings, win share and mean score "
        "with 95% CIs.",
        usage="parlour league ENV --agents SPEC [SPEC ...] [options]\n"
        "       parlour league show ENV [options]",
        arguments=_league_arguments,
        quiet=True,
    ),
)
