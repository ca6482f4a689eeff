"""``parlour arena``: candidate A against a field of B, win rates with 95% CIs."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import (
    UsageError,
    add_executor_args,
    check_executor,
    env_arg,
    parse_options,
    positive_int,
)


def cmd_arena(args: argparse.Namespace) -> int:
    from ..training.arena import run_arena, save_json
    from ..training.checkpoint import check_output_path

    check_executor(args)
    if args.record and args.executor == "ray":
        raise UsageError(
            "--record writes each game from this process: use it without "
            "--executor ray"
        )
    if args.json:
        check_output_path(args.json, what="--json")
    if args.record:
        check_output_path(args.record, what="--record")
        Path(args.record).parent.mkdir(parents=True, exist_ok=True)
    common = {
        "games": args.games,
        "duplicate": args.duplicate,
        "seed": args.seed,
        "env_options": parse_options(args.option),
        "progress": not args.quiet,
    }
    if args.record:
        # every game's moves (and a text agent's prompts and answers) as JSONL, appended
        # as each game ends; parlour.text.replay plays a record again
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
    print(result.table())
    if args.json:
        save_json(result, args.json)
        print(f"wrote {args.json}")
    if args.record:
        print(f"recorded the games in {args.record}")
    return 0



def add_parser(sub) -> None:
    """The subcommand's parser."""
    p = sub.add_parser(
        "arena",
        help="play agents against each other and report win rates with 95%% CIs",
        description="Candidate A against a field of B. Agents: random, heuristic, "
        "heuristic:-tip,+tip.",
    )
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
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    p.add_argument(
        "--record",
        metavar="FILE",
        help="append every game (moves, text agents' prompts and answers) to this "
        "JSONL file, for parlour.text.replay",
    )
    add_executor_args(p, "deals")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_arena)
