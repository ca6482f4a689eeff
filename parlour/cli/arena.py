"""``parlour arena``: candidate A against a field of B, win rates with 95% CIs."""

from __future__ import annotations

import argparse
import sys

from .common import (
    Command,
    UsageError,
    add_executor_args,
    check_executor,
    env_arg,
    parse_options,
    positive_int,
)


def cmd_arena(args: argparse.Namespace) -> int:
    from ..paths import prepare_output_file
    from ..training.arena import ArenaInterrupted, run_arena, save_json

    check_executor(args)
    if args.record is not None and args.executor == "ray":
        raise UsageError(
            "--record writes each game from this process: use it without --executor ray"
        )
    if args.json is not None:
        prepare_output_file(args.json, what="--json")
    if args.record is not None:
        prepare_output_file(args.record, what="--record")
    common = {
        "games": args.games,
        "duplicate": args.duplicate,
        "seed": args.seed,
        "env_options": parse_options(args.option),
        "progress": not args.quiet,
    }
    try:
        if args.record:
            # every game's moves (and a text agent's prompts and answers) as JSONL,
            # appended as each game ends; parlour.text.replay plays a record again
            from ..text import run_text_arena

            result = run_text_arena(args.env, args.agents, args.record, **common)
        else:
            result = run_arena(
                args.env,
                args.agents,
                executor=args.executor,
                address=args.address,
                **common,
            )
    except ArenaInterrupted as stop:
        # Ctrl-C: report and write what was finished, then exit as interrupted
        result = stop.result
        if not result.games:
            print(
                "\ninterrupted before a game finished: nothing to report",
                file=sys.stderr,
            )
            return 130
    print(result.table())
    if args.json:
        save_json(result, args.json)
        print(f"wrote {args.json}")
    if args.record:
        print(f"recorded the games in {args.record}")
    if result.interrupted:
        print(
            f"interrupted: kept {result.games} of {result.planned} games",
            file=sys.stderr,
        )
        return 130
    return 0


def _arena_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``parlour arena``."""
    env_arg(p)
    p.add_argument(
        "--agents",
        nargs=2,
        required=True,
        metavar=("A", "B"),
        help="candidate and field agent specs",
    )
    p.add_argument(
        "--games", type=positive_int, default=200, help="games to play (200)"
    )
    p.add_argument(
        "--duplicate",
        action="store_true",
        help="replay every deal with the seats swapped (paired comparison)",
    )
    p.add_argument(
        "--seed", type=int, default=0, help="base seed for deals and agents (0)"
    )
    p.add_argument(
        "--json",
        metavar="FILE",
        help="also write the results as JSON (missing folders are created)",
    )
    p.add_argument(
        "--record",
        metavar="FILE",
        help="append every game (moves, text agents' prompts and answers) to this "
        "JSONL file, for parlour.text.replay (missing folders are created)",
    )
    add_executor_args(p, "deals")


#: the subcommands of this module (`parlour.cli.build_parser` adds them)
COMMANDS = (
    Command(
        "arena",
        cmd_arena,
        help="play agents against each other and report win rates with 95%% CIs",
        description="Candidate A against a field of B. Agents: random, heuristic, "
        "heuristic:-tip,+tip.",
        arguments=_arena_arguments,
        quiet=True,
    ),
)
