"""What an ``expert`` vs ``solver`` match of German Whist costs, in CPU seconds.

Plays ``--matches`` arena games of ``german_whist_v0`` (Honeymoon by default: a game is
a match of many deals; ``--variant german``: one deal), ``expert`` against ``solver``
with duplicate deals, as ``parlour arena ... --agents expert solver --duplicate`` does,
and prints the CPU seconds a match costs (both bots: every decision of both seats, and
building them once, the network's loading included).

Each side of the comparison runs in a child process of its own, so each starts with an
empty transposition table and the figures are that child's CPU time (a benchmark is
not a test: nothing here is asserted, and the machine's other work still disturbs the
times, less than it would wall-clock times). The reference is measured in the same run
on the same seeds:

* ``--reference PYTHON``: an interpreter whose ``parlour`` is another tree (say a
  virtual environment with the previous commit installed), for a before/after ratio;
* ``--reference-jit 0``: this tree with the pure-Python stage-2 search
  (``PARLOUR_JIT=0``), for what the compiled search (numba) buys;
* otherwise this tree with the solver's table limited to ``--reference-tt`` entries
  (500 000, the limit before it was raised), which shows what the larger table buys.

``--jit`` / ``--reference-jit`` set ``PARLOUR_JIT`` for one side (default: as in this
environment); each side reports the backend that searched.

Both sides must play the same games (the search is exact, so no change of speed may
change a result): the script compares every match's scores and says if they differ.

    python benchmarks/whist_match_speed.py              # 2 Honeymoon matches
    python benchmarks/whist_match_speed.py --matches 10 --seed 9851 --json speed.json
    python benchmarks/whist_match_speed.py --variant german --matches 20
    python benchmarks/whist_match_speed.py --reference /tmp/old/.venv/bin/python
    python benchmarks/whist_match_speed.py --matches 10 --seed 10101 --reference-jit 0
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

VARIANTS = ("honeymoon", "german")


def play(variant: str, matches: int, seed: int, tt_limit: int | None) -> dict[str, Any]:
    """Play the matches in this process; CPU seconds and every match's scores."""
    from parlour.agents.solver.german_whist import SHARED
    from parlour.training.arena import run_arena

    if tt_limit is not None:
        SHARED.tt_limit = tt_limit
    start = time.process_time()
    result = run_arena(
        "german_whist_v0",
        ["expert", "solver"],
        games=matches,
        duplicate=True,
        seed=seed,
        env_options={"variant": variant},
    )
    cpu = time.process_time() - start
    return {
        "backend": SHARED.backend,
        "cpu_s": cpu,
        "games": result.games,
        "cpu_per_match_s": cpu / max(result.games, 1),
        "candidate_scores": result.candidate_scores,
        "field_scores": result.field_scores,
    }


def run_side(
    python: str, args: argparse.Namespace, tt_limit: int | None, jit: str | None = None
) -> dict:
    """One side of the comparison in a child process (``python`` runs this script;
    ``jit``: its ``PARLOUR_JIT``, None to inherit this environment's)."""
    cmd = [
        python,
        __file__,
        "--child",
        "--variant",
        args.variant,
        "--matches",
        str(args.matches),
        "--seed",
        str(args.seed),
    ]
    if tt_limit is not None:
        cmd += ["--tt-limit", str(tt_limit)]
    env = dict(os.environ)
    if jit is not None:
        env["PARLOUR_JIT"] = jit
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise SystemExit(
            f"whist_match_speed.py: the side run by {python} failed: {last}"
        )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Measure this tree and the reference; print and return the figures."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--variant", choices=VARIANTS, default="honeymoon")
    p.add_argument(
        "--matches",
        type=int,
        default=2,
        help="arena games (with duplicate deals: an even number; default 2)",
    )
    p.add_argument("--seed", type=int, default=9851, help="arena seed (9851)")
    p.add_argument(
        "--reference",
        metavar="PYTHON",
        help="interpreter of the reference tree (default: this tree, --reference-tt)",
    )
    p.add_argument(
        "--reference-tt",
        type=int,
        default=500_000,
        help="without --reference: the reference's table limit (500000)",
    )
    p.add_argument(
        "--jit",
        choices=("0", "1"),
        help="PARLOUR_JIT for this tree's side (0: pure-Python search, 1: numba)",
    )
    p.add_argument(
        "--reference-jit",
        choices=("0", "1"),
        help="PARLOUR_JIT for the reference side; without --reference the reference "
        "is then this tree with its own table limit",
    )
    p.add_argument("--json", help="also write the figures to this JSON file")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--tt-limit", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.matches < 2 or args.matches % 2:
        p.error(f"--matches must be an even number, at least 2, got {args.matches}")
    if args.reference_tt < 1:
        p.error(f"--reference-tt must be positive, got {args.reference_tt}")
    if args.reference and not (
        os.path.isfile(args.reference) and os.access(args.reference, os.X_OK)
    ):
        p.error(f"--reference {args.reference} is not an executable Python interpreter")
    if args.json:
        from parlour.paths import check_output_path

        try:
            check_output_path(args.json, what="--json")
        except ValueError as err:
            p.error(str(err))
    if args.child:
        print(json.dumps(play(args.variant, args.matches, args.seed, args.tt_limit)))
        return {}

    ref_tt = None if args.reference or args.reference_jit else args.reference_tt
    if args.reference:
        ref_name = args.reference
    elif args.reference_jit:
        ref_name = f"this tree, PARLOUR_JIT={args.reference_jit}"
    else:
        ref_name = f"this tree, table {args.reference_tt:,} entries"
    now = run_side(sys.executable, args, None, args.jit)
    ref = run_side(args.reference or sys.executable, args, ref_tt, args.reference_jit)
    same = (now["candidate_scores"], now["field_scores"]) == (
        ref["candidate_scores"],
        ref["field_scores"],
    )
    report = {
        "variant": args.variant,
        "matches": args.matches,
        "seed": args.seed,
        "now": now,
        "reference": {"side": ref_name, **ref},
        "ratio": ref["cpu_s"] / now["cpu_s"],
        "same_results": same,
    }
    print(f"german_whist_v0 ({args.variant}): expert vs solver, {args.matches} matches")
    print(f"{'side':34s} {'search':>7s} {'CPU s':>8s} {'CPU s/match':>12s}")
    for name, side in (("this tree", now), (ref_name, ref)):
        print(
            f"{name[:34]:34s} {side.get('backend', '?'):>7s} {side['cpu_s']:8.1f} "
            f"{side['cpu_per_match_s']:12.2f}"
        )
    print(f"reference / this tree: {report['ratio']:.2f}x")
    verdict = "yes" if same else "NO: the two sides played differently"
    print(f"same results: {verdict}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    return report


if __name__ == "__main__":
    main()
