"""Make ``docs/leaderboard.md``: one league per game with every bot kind, rated.

    python benchmarks/leaderboard.py [--db runs/leaderboard.sqlite] [--scale 1.0]
        [--add ENV=SPEC ...] [--only ENV ...] [--no-shipped] [--append]
        [--executor ray [--address A]]

Each game gets a league (`parlour.league`) of ``random``, ``heuristic``, the
heuristic with each of its tips switched off, the search bots (``pimc:4`` and ``solver``
for the card games; ``optimal`` and ``threshold:N`` for the dice game), the shipped
agents ``pretrained`` and ``expert`` where a model is shipped for the table's options
(``--no-shipped`` leaves them out) and any ``--add ENV=SPEC`` (e.g. ``--add
german_whist_v0=ckpt:runs/x``, a trained checkpoint).
The games are stored in ``--db`` (a new file unless ``--append``); the document gets a
table per game (openskill rating, win share and mean score with 95% CIs) and a plot per
game in ``docs/leaderboard/``. ``--scale`` multiplies the games per table (0.1 for a
quick look). The whole run takes about 2.5 minutes on the 2-core reference machine
with the compiled searches (load about 2, 2026-12-05; 8 minutes before Forty-Fives' and
Herzeln's searches were compiled). ``--executor ray`` plays the leagues' batches as Ray
tasks (one Ray for all of them: a local one, or the cluster at ``--address``;
docs/scale-out.md); the games stored are the same.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import sys
import time
from pathlib import Path

from parlour import agents, envs, league
from parlour.training import distributed, pretrained
from parlour.training.arena import teams_of

# env -> (env options, games per table, the bot specs beyond random/heuristic/tips off)
GAMES: dict[str, tuple[dict, int, list[str]]] = {
    "german_whist_v0": ({}, 16, ["pimc:4", "solver"]),
    # one deal per game: a match to 45 with the search bots costs ~15 times as much
    "forty_fives_v0": ({"episode": "deal"}, 32, ["pimc:4", "solver"]),
    "fuenfzehnern_v0": ({}, 32, ["pimc:4", "solver"]),
    "herzeln_v0": ({}, 24, ["pimc:4", "solver"]),
    "fuenfzehn_tot_v0": (
        {},
        200,
        ["optimal", "threshold:8", "threshold:10", "threshold:12", "threshold:13"]
        + ["threshold:14"],
    ),
}


def shipped_agents(env_name: str, options: dict) -> list[str]:
    """``pretrained`` and ``expert`` where a model is shipped for these options (the
    league names them by the network's hash), else none."""
    try:
        pretrained.model_dir(env_name, options)
    except ValueError:
        return []
    return ["pretrained", "expert"]


def agent_list(env_name: str, extra: list[str], added: list[str]) -> list[str]:
    """random, heuristic, each tip off, the search bots, then the added specs; the
    strong bots are spread through the list because tables of 3+ sides seat
    neighbours in the list together."""
    tips_off = [f"heuristic:-{name}" for name in agents.heuristic_switches(env_name)]
    head = ["random", "heuristic"] if env_name != "fuenfzehn_tot_v0" else ["random"]
    specs = head + tips_off
    strong = extra + added
    if not strong:
        return specs
    # interleave: a strong bot after every len(specs)/len(strong) others
    step = max(1, len(specs) // len(strong))
    out: list[str] = []
    for i, spec in enumerate(specs):
        out.append(spec)
        if (i + 1) % step == 0 and strong:
            out.append(strong.pop(0))
    return out + strong


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default="runs/leaderboard.sqlite")
    parser.add_argument("--out", default="docs/leaderboard.md")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--add", action="append", default=[], metavar="ENV=SPEC")
    parser.add_argument("--only", nargs="+", metavar="ENV", help="just these games")
    parser.add_argument(
        "--no-shipped",
        action="store_true",
        help="leave out the shipped agents (pretrained, expert)",
    )
    parser.add_argument("--append", action="store_true")
    parser.add_argument("--executor", choices=["local", "ray"], default="local")
    parser.add_argument("--address", metavar="ADDR", help="Ray cluster (with ray)")
    args = parser.parse_args(argv)
    try:
        # refused here, before any league: --address without ray, Ray missing, an
        # address nothing answers at
        session = distributed.session_for(args.executor, args.address)
    except ValueError as err:
        parser.error(str(err))
    added: dict[str, list[str]] = {}
    for item in args.add:
        env_name, sep, spec = item.partition("=")
        if not sep or env_name not in GAMES:
            parser.error(f"--add wants ENV=SPEC with ENV one of {', '.join(GAMES)}")
        added.setdefault(env_name, []).append(spec)
    if args.scale <= 0:
        parser.error("--scale must be positive")
    db = Path(args.db)
    if db.exists() and not args.append:
        parser.error(f"{db} exists: remove it, or pass --append to add games to it")
    chosen = args.only or list(GAMES)
    for env_name in chosen:
        if env_name not in GAMES:
            parser.error(f"unknown game {env_name}; games: {', '.join(GAMES)}")
    plan = {}
    for env_name in chosen:
        options, games, extra = GAMES[env_name]
        if not args.no_shipped:
            extra = extra + shipped_agents(env_name, options)
        specs = agent_list(env_name, list(extra), list(added.get(env_name, [])))
        games = max(1, round(games * args.scale))
        # every spec is checked before the first game of the first league
        league.prepare(env_name, specs, options)
        plan[env_name] = (options, games, specs)

    timings: dict[str, float] = {}
    where = f"{os.cpu_count()} CPUs"
    with session or contextlib.nullcontext():
        if session is not None:
            where = f"Ray, {session.workers} CPUs"
        for env_name, (options, games, specs) in plan.items():
            start = time.perf_counter()
            run = league.run_league(
                env_name,
                specs,
                games=games,
                db=db,
                env_options=options,
                progress=True,
                executor=args.executor,
                address=args.address,
            )
            timings[env_name] = time.perf_counter() - start
            if run.interrupted:
                print(f"interrupted; {db} keeps every finished batch", file=sys.stderr)
                return 130

    command = "python benchmarks/leaderboard.py" + "".join(
        f" {a}" for a in _replay_args(args)
    )
    out = Path(args.out)
    figures = out.parent / "leaderboard"
    sections = []
    for env_name, (options, games, specs) in plan.items():
        board = league.leaderboards(db, env_name, options)[0]
        figure = board.plot(figures / f"{env_name}.png")
        game = envs.make(env_name, raw=True, **options).game
        sides = teams_of(game)
        opts = ", ".join(f"{k}={v}" for k, v in options.items()) or "defaults"
        sections.append(
            "\n".join(
                [
                    f"## {env_name}",
                    "",
                    f"Options: {opts} ({game.num_players} players, {len(sides)} "
                    f"sides). {len(specs)} agents, "
                    f"{len(league.tables_for(specs, len(sides)))} tables, "
                    f"{-(-games // len(sides))} deals per table, each played in "
                    f"{len(sides)} seatings ({board.games} games stored; "
                    f"{timings[env_name] / 60:.1f} min).",
                    "",
                    board.markdown(),
                    "",
                    f"![{env_name} ratings]({figure.relative_to(out.parent)})",
                ]
            )
        )
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    note = (
        f"This run: {sum(timings.values()) / 60:.1f} min of play on {where} "
        f"shared with other jobs (load average at the end: {load})."
    )
    out.write_text(_document(command, note, sections))
    print(f"wrote {out} and {figures}/")
    print(f"made by: {command}")
    return 0


def _replay_args(args: argparse.Namespace) -> list[str]:
    out = []
    if args.db != "runs/leaderboard.sqlite":
        out.append(f"--db {shlex.quote(args.db)}")
    if args.out != "docs/leaderboard.md":
        out.append(f"--out {shlex.quote(args.out)}")
    if args.scale != 1.0:
        out.append(f"--scale {args.scale:g}")
    for item in args.add:
        out.append(f"--add {shlex.quote(item)}")
    if args.only:
        out.append("--only " + " ".join(args.only))
    if args.no_shipped:
        out.append("--no-shipped")
    return out


def _document(command: str, note: str, sections: list[str]) -> str:
    return f"""# Leaderboard

Every bot kind of every game, rated on one table per game by `parlour league`. Made by

```sh
{command}
```

(a fresh `runs/leaderboard.sqlite`; the games are in it, `parlour league show ENV --db
runs/leaderboard.sqlite` prints a table again). Deal seeds are fixed per deal index, so
the same command gives the same games. {note}

How to read it:

- **Rating**: openskill's Plackett–Luce model, updated game by game in the order the
  games were stored; each side (a partnership in Forty-Fives) is a team, ranked by its
  score. μ ± 1.96σ is the rating with its uncertainty; the plot draws the same bars.
  The updates are online, so the order of the games matters a little: agents whose bars
  overlap are not told apart. With two sides every agent meets the same field, and the
  win share and mean score compare agents directly.
- **Win share**: the share of games the agent's side had the top score (a tie for the
  top splits it), with a 95% Wilson interval. An even share is 1/sides.
- **Mean score**: the mean return of the agent's side per game (the env's reward), with
  a 95% interval.
- Games are duplicate deals: each deal of a table is played once per seating, the
  agents rotating through the sides. Two sides: every pair of agents is a table. More
  sides: the agents sit in rotation (table *i* is agents *i … i+k−1* of the list), so
  each agent meets its neighbours in the list; the search bots are spread through it.
  Games within a deal are not independent, so the intervals are somewhat narrow.
- `heuristic:-tip` is the heuristic bot with one strategy tip switched off (the tips
  come from the rule book's "Strategy tips"; see `docs/tips/`). `pimc:4` is determinized
  search with 4 sampled deals, `solver` the game's search bot at its default strength
  (`docs/solvers.md`). Fünfzehn – tot: `optimal` is the exact turn solver (the heuristic
  bot), `heuristic:-lookahead` the same without looking at the seats still to play,
  `threshold:N` stands at N or more.

**The shipped agents**: `pretrained` (the shipped network alone) and `expert` (the
network with the game's search at play time, `docs/solvers.md`) sit at every table whose
options a model is shipped for; the league stores each under the SHA-256 of its weights
(`pretrained#HASH`) or of its weights and its search's budget (`expert#HASH`), so a
table names the player it rated.
Forty-Fives' table plays single deals, and its shipped model was trained for
matches to 45, so it has none. Add any other checkpoint with
`--add german_whist_v0=ckpt:runs/x` (repeatable, any game).

**Over Ray**: `--executor ray [--address ADDR]` plays the leagues' batches as Ray tasks,
on a local Ray or a cluster (`docs/scale-out.md`); each deal's seed fixes its games, so
the tables are the same as with the local executor.

{chr(10).join(s + chr(10) for s in sections)}"""


if __name__ == "__main__":
    sys.exit(main())
