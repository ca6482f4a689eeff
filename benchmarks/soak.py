"""Soak-test the envs: random legal games through the full env, every step checked;
with ``--minutes``, every env, variant, bot kind and batched engine for that long.

    python benchmarks/soak.py --minutes 5                 # everything, 5 minutes
    python benchmarks/soak.py --minutes 1 herzeln_v0      # one env's tasks, 1 minute
    python benchmarks/soak.py german_whist_v0             # 1000 games per variant
    python benchmarks/soak.py german_whist_v0 --games 10000 --seed 3
    python benchmarks/soak.py german_whist_v0 --games 1000000 --variant-index 2

For every variant in ``parlour.envs.VARIANTS[ENV]`` (or only the one at
``--variant-index``) this runs `parlour.envs.core.soak.soak`, which checks at every
step that the action masks equal the engine's legal actions, that observations are
finite float32 inside their spaces, that the engine's invariants hold, that rewards
add up to the engine's returns (and to zero, for a zero-sum game), and that episodes
end in time. A progress bar (on stderr) runs per
variant; a table on stdout sums up wins per seat, episode lengths and speed.

Long runs (10^6 games): run one variant per process, so that both cores work and a
failure names its variant, each with its own seed::

    for i in 0 1 2; do
        python benchmarks/soak.py german_whist_v0 --games 1000000 \
            --variant-index $i --seed $i > soak_$i.txt &
    done; wait

``--minutes M`` (``make soak``) runs `benchmarks/soak_all.py`: round after round,
every variant of every env (or of the envs named) plays one game with each bot kind
the env has (``random``, ``heuristic``, ``solver``, ``pimc:2``, ``optimal``,
``threshold:12``, ``endgame:heuristic``, ``pretrained``) in one seat and random moves
elsewhere, and its batched engine takes 50 random steps of 64 games, every step
checked, until M minutes are up. A table sums up games and checked steps per env and
player; every failure is listed with the seed and unit that replay it
(``soak_all.play_unit``), and the exit status is 1.

Speed, measured as CPU time of one process (about 140 µs per checked step): German
Whist 150 games/s, so 10^6 games take about 1.8 hours of one core; a Honeymoon deal
134 games/s (2.1 h); a Honeymoon match (343 steps a game) 21 games/s (13 h). A busy
machine stretches the wall-clock time accordingly.

The bar shows the rate and the time left. A failed check stops the run, prints the
variant, soak seed and game (``soak(env, options, games=g + 1, seed=s)`` replays it)
and exits with status 1; bad arguments exit with status 2 and a usage message.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import soak_all

from parlour import envs
from parlour.cli.common import _int_at_least, positive_int
from parlour.envs.core.soak import soak

_seed = _int_at_least(0, "an integer >= 0")  # the message the soak tests expect


def _minutes(text: str) -> float:
    """An argparse type: a positive number of minutes."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a positive number, got {text!r}"
        ) from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {value}")
    return value


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line; exits with status 2 and a message on bad arguments."""
    parser = argparse.ArgumentParser(
        prog="benchmarks/soak.py",
        description="Random legal games of each variant of an env, every step checked.",
    )
    parser.add_argument(
        "env",
        metavar="ENV",
        nargs="*",
        help=f"env name: {', '.join(envs.names())} (with --minutes: any, default all)",
    )
    parser.add_argument(
        "--minutes",
        type=_minutes,
        default=None,
        metavar="M",
        help="soak every variant, bot kind and batched engine for M minutes",
    )
    parser.add_argument(
        "--games",
        type=positive_int,
        default=1000,
        help="games per variant (default 1000)",
    )
    parser.add_argument("--seed", type=_seed, default=0, help="soak seed (default 0)")
    parser.add_argument(
        "--variant-index",
        type=_seed,
        default=None,
        metavar="I",
        help="run only variant I of parlour.envs.VARIANTS[ENV] (from 0)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    for name in args.env:
        if name not in envs.names():
            parser.error(f"unknown env {name!r}; known: {', '.join(envs.names())}")
    if args.minutes is not None:
        if args.variant_index is not None:
            parser.error("--variant-index goes with one ENV, not with --minutes")
        args.env = args.env or envs.names()
        return args
    if len(args.env) != 1:
        parser.error(
            "the following arguments are required: ENV (one env), or --minutes M"
        )
    args.env = args.env[0]
    variants = envs.VARIANTS.get(args.env, [])
    if not variants:
        parser.error(f"{args.env} has no variants in parlour.envs.VARIANTS")
    if args.variant_index is not None and args.variant_index >= len(variants):
        parser.error(
            f"--variant-index {args.variant_index} is out of range: {args.env} has "
            f"{len(variants)} variants (0..{len(variants) - 1})"
        )
    return args


def table(results: list[tuple[int, dict[str, Any]]]) -> str:
    """The summary table: one row per variant."""
    head = (
        "#",
        "options",
        "games",
        "steps",
        "mean len",
        "max len",
        "wins per seat",
        "draws",
        "seconds",
        "games/s",
    )
    rows = [head]
    for index, r in results:
        opts = ", ".join(f"{k}={v}" for k, v in r["options"].items()) or "(defaults)"
        rows.append(
            (
                str(index),
                opts,
                str(r["games"]),
                str(r["steps"]),
                f"{r['mean_length']:.1f}",
                str(r["max_length"]),
                " / ".join(map(str, r["wins"])),
                str(r["draws"]),
                f"{r['seconds']:.1f}",
                f"{r['games'] / max(r['seconds'], 1e-9):.0f}",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def timed(args: argparse.Namespace) -> int:
    """The timed soak of every task (`soak_all`); 0 when nothing failed, else 1."""
    try:
        done = soak_all.run(args.env, args.minutes, args.seed, not args.no_progress)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    print(
        f"soak of {', '.join(args.env)} for {args.minutes:g} min: every variant, bot "
        "kind and batched engine; every step checked"
    )
    print(soak_all.summary(done, args.seed))
    return 1 if any(t.failure is not None for t in done) else 0


def main(argv: list[str] | None = None) -> int:
    """Run the soak; 0 when every check passed, 1 on a failed check."""
    args = parse_args(argv)
    if args.minutes is not None:
        return timed(args)
    variants = list(enumerate(envs.VARIANTS[args.env]))
    if args.variant_index is not None:
        variants = [variants[args.variant_index]]
    results = []
    for index, options in variants:
        try:
            result = soak(
                args.env, options, args.games, args.seed, progress=not args.no_progress
            )
        except AssertionError as err:
            print(f"SOAK FAILED in variant {index} ({options}): {err}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print(f"interrupted in variant {index}", file=sys.stderr)
            return 130
        results.append((index, result))
    print(
        f"{args.env}: {args.games} random games per variant, seed {args.seed}; "
        "every step checked"
    )
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
