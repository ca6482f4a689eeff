"""How fast the trick-game solvers and the PIMC bots run.

Rows (each timed in CPU seconds of this process, so other work on a shared machine
disturbs them less than wall-clock time would; a benchmark is not a test: a MISS is
reported, never raised):

* **stage-2 start, German**: a 13-card stage-2 start position solved as German Whist is
  scored (can the leader's side reach 7?), fresh transposition table for each position.
  Positions come from ``--source``: ``play`` (default) plays stage 1 with the heuristic
  bot on both seats, the hands a real game reaches; ``random`` splits 26 random cards.
* **stage-2 start, Honeymoon**: the same for Honeymoon Whist, solved for the most
  tricks.
* **PIMC decisions**: stage-1 decisions of ``pimc:N`` for each ``--samples`` N, on
  states reached by heuristic play (the shared table warm, as in a game): decisions per
  second, mean and p95 time per decision.

* **Forty-Fives, Fünfzehnern, Herzeln** (``--games``, all by default; ``--no-german``
  skips the rows above): exact solves of positions from heuristic play (a full 5-card
  Forty-Fives deal, Fünfzehnern and Herzeln at 8, 7 and 6 cards in hand), mean, p95 and
  max with a fresh table each; and ``pimc:N`` trick-play decisions per second.

Targets (issue 9): a German stage-2 start solved in under 1 s on average; a PIMC
decision of the arena bot in about 50 ms.

    python benchmarks/solver_speed.py                       # 40 positions, N = 1 2 4 8
    python benchmarks/solver_speed.py --positions 10 --samples 2 4 --json speed.json
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from typing import Any

import numpy as np
from _common import COMPILED_SEARCHES, search_backend

from parlour.agents.base import Turn
from parlour.agents.german_whist import GermanWhistHeuristic
from parlour.agents.solver import german_whist as sg
from parlour.envs.core.engine import TERMINAL
from parlour.envs.german_whist.rules import GermanWhist

TARGET_SOLVE = 1.0  # seconds, mean, German stage-2 start
TARGET_DECISION = 0.050  # seconds, mean, PIMC decision of the arena bot
TARGET_FF_SOLVE = 0.050  # seconds, mean, a 4-player Forty-Fives deal from its start


def turn(game: GermanWhist, state, seat: int) -> Turn:
    mask = np.zeros(game.num_actions, dtype=np.int8)
    mask[game.legal_actions(state)] = 1
    return Turn(game, state, seat, np.zeros(0, dtype=np.float32), mask)


def heuristic_games(
    variant: str, count: int, seed: int
) -> tuple[GermanWhist, list, list]:
    """Stage-2 start states and stage-1 decision states of ``count``
    heuristic-vs-heuristic deals."""
    game = GermanWhist(variant=variant, episode="deal")
    rng = np.random.default_rng(seed)
    starts, decisions = [], []
    for i in range(count):
        bots = [
            GermanWhistHeuristic(seed=seed + i),
            GermanWhistHeuristic(seed=seed + i + 1),
        ]
        st = game.new_state()
        while True:
            p = game.advance_chance(st, rng)
            if st.stage == 2:
                starts.append(st)
                break
            if len(game.legal_actions(st)) > 1 and rng.random() < 0.3:
                decisions.append(st.clone())
            game.apply(st, bots[p].act(turn(game, st, p)))
    return game, starts, decisions


def random_starts(variant: str, count: int, seed: int) -> tuple[GermanWhist, list]:
    game = GermanWhist(variant=variant, episode="deal")
    rng = np.random.default_rng(seed)
    return game, [
        sg.random_stage2_state(game, 13, rng, tricks=(0, 0)) for _ in range(count)
    ]


def _solve_stats(times: list[float], nodes: list[int]) -> dict[str, Any]:
    """The summary of timed exact solves: CPU seconds (mean, p95, max) and nodes."""
    return {
        "positions": len(times),
        "mean_s": float(np.mean(times)),
        "p95_s": float(np.percentile(times, 95)),
        "max_s": float(np.max(times)),
        "mean_nodes": float(np.mean(nodes)),
    }


def _decision_stats(bot: Any, samples: int, positions: list) -> dict[str, Any]:
    """CPU seconds of one decision of ``bot`` (``pimc:samples``) at each ``(game,
    state)`` of ``positions``, summarised."""
    times = []
    for game, st in positions:
        t0 = time.process_time()
        bot.act(turn(game, st, st.to_play))
        times.append(time.process_time() - t0)
    return {
        "samples": samples,
        "decisions": len(times),
        "per_s": len(times) / sum(times),
        "mean_s": float(np.mean(times)),
        "p95_s": float(np.percentile(times, 95)),
    }


def time_solves(game: GermanWhist, states: list) -> dict[str, Any]:
    """CPU time to solve each stage-2 start with a fresh table: German, the win/loss of
    the seat to lead; Honeymoon, its most tricks."""
    times, nodes = [], []
    for st in states:
        solver = sg.Stage2Solver()
        ps = sg.PositionSolver(game, st.trump_mask, solver)
        pos = sg.Stage2Position.from_state(st)
        t0 = time.process_time()
        if game.honeymoon:
            ps.max_tricks(pos, pos.to_play)
        else:
            ps.can_take(pos, pos.to_play, 7)
        times.append(time.process_time() - t0)
        nodes.append(solver.nodes)
    return _solve_stats(times, nodes)


def time_pimc(
    game: GermanWhist, states: list, samples: int, seed: int
) -> dict[str, Any]:
    """CPU time per stage-1 decision of ``pimc:samples``. The shared table starts empty
    and is warmed by three decisions that are not timed, as earlier tricks of a game
    would warm it."""
    sg.SHARED.clear()
    bot = sg.PIMCAgent(samples, seed=seed)
    warm, timed = states[:3], states[3:]
    for st in warm:
        bot.act(turn(game, st, st.to_play))
    return _decision_stats(bot, samples, [(game, st) for st in timed])


# --- Forty-Fives, Fünfzehnern, Herzeln ------------------------------------------------
def _solver_mod(name: str):
    from parlour.agents.solver import forty_fives, fuenfzehnern, herzeln

    return {"ff": forty_fives, "fz": fuenfzehnern, "hz": herzeln}[name]


#: game -> [(row label, env options, cards in hand, open trick allowed)]
TRICK_GAMES: dict[str, list[tuple[str, dict[str, Any], int]]] = {
    "forty_fives": [
        ("Forty-Fives 4p, deal start (5 cards)", {"players": 4}, 5),
        ("Forty-Fives 2p, deal start", {"players": 2}, 5),
        ("Forty-Fives 6p, deal start", {"players": 6}, 5),
    ],
    "fuenfzehnern": [
        ("Fünfzehnern 4p, deal start (8 cards)", {}, 8),
        ("Fünfzehnern 4p, 7 cards", {}, 7),
        ("Fünfzehnern 4p, 6 cards", {}, 6),
        ("Fünfzehnern 3p, deal start (8 cards)", {"players": 3}, 8),
    ],
    "herzeln": [
        ("Herzeln 4p, 7 contracts, 6 cards", {"players": 4}, 6),
        ("Herzeln 4p, 7 contracts, 7 cards", {"players": 4}, 7),
        ("Herzeln 3p, 7 contracts, deal start", {"players": 3}, 8),
    ],
}
ENV_OF = {
    "forty_fives": ("forty_fives_v0", "ff"),
    "fuenfzehnern": ("fuenfzehnern_v0", "fz"),
    "herzeln": ("herzeln_v0", "hz"),
}
HERZELN_TRICK_CONTRACTS = (
    "no_hearts",
    "tricks",
    "no_tricks",
    "no_queens",
    "king_of_hearts",
    "last_trick",
    "no_last_trick",
)


def _make_game(name: str, options: dict[str, Any], i: int):
    from parlour.envs.forty_fives.rules import FortyFives
    from parlour.envs.fuenfzehnern.rules import Fuenfzehnern
    from parlour.envs.herzeln.rules import Herzeln

    if name == "forty_fives":
        return FortyFives(episode="deal", **options)
    if name == "fuenfzehnern":
        return Fuenfzehnern(**options)
    contract = HERZELN_TRICK_CONTRACTS[i % len(HERZELN_TRICK_CONTRACTS)]
    return Herzeln(contract=contract, **options)


def heuristic_positions(
    name: str, options: dict[str, Any], cards: int | None, count: int, seed: int
) -> list[tuple[Any, Any]]:
    """(game, state) pairs from heuristic play on every seat: trick-play decisions with
    ``cards`` in the hand to act and no card led (``cards=None``: every trick-play
    decision with a choice, open tricks included)."""
    from parlour import agents

    env_name, _ = ENV_OF[name]
    rng = np.random.default_rng(seed)
    out: list[tuple[Any, Any]] = []
    i = 0
    while len(out) < count:
        game = _make_game(name, options, i)
        bots = [
            agents.make("heuristic", env_name, seed=seed + i * 10 + s)
            for s in range(game.num_players)
        ]
        st = game.new_state()
        i += 1
        while len(out) < count:
            p = game.advance_chance(st, rng)
            if p == TERMINAL:
                break
            trick_play = st.phase.name in ("PLAY", "TRICKS")
            size = st.hands[p].bit_count()
            if trick_play and cards is not None and size == cards and not st.trick:
                out.append((game, st.clone()))
                break
            if trick_play and cards is None and len(game.legal_actions(st)) > 1:
                if rng.random() < 0.3:
                    out.append((game, st.clone()))
            game.apply(st, bots[p].act(turn(game, st, p)))
    return out


def time_trick_solves(name: str, positions: list) -> dict[str, Any]:
    """CPU time of one exact solve of each position (fresh table): the value of the
    seat to lead."""
    mod = _solver_mod(ENV_OF[name][1])
    times, nodes = [], []
    for game, st in positions:
        t0 = time.process_time()
        solver = mod.solver_for(game, st, st.to_play)
        if name == "forty_fives":
            ext = solver.bonus_card([])
        elif name == "fuenfzehnern":
            ext = mod.canonical_chain(game, st.chain)
        else:
            ext = None
        solver.value(st.leader, [], ext)
        times.append(time.process_time() - t0)
        nodes.append(solver.nodes)
    return _solve_stats(times, nodes)


def time_trick_pimc(
    name: str, positions: list, samples: int, seed: int
) -> dict[str, Any]:
    """CPU time per trick-play decision of ``pimc:samples`` (default hand-size limit:
    decisions above it go to the heuristic and are cheap)."""
    from parlour import agents

    bot = agents.make(f"pimc:{samples}", ENV_OF[name][0], seed=seed)
    return _decision_stats(bot, samples, positions)


def trick_game_rows(name: str, args: argparse.Namespace, report: dict) -> None:
    """Solve rows and PIMC rows of one of the other trick games."""
    env_name = ENV_OF[name][0]
    if env_name in COMPILED_SEARCHES:
        report[f"{name}_search"] = backend = search_backend(env_name)
        print(f"({COMPILED_SEARCHES[env_name][0]}: {backend} search)")
    for label, options, cards in TRICK_GAMES[name]:
        positions = heuristic_positions(
            name, options, cards, args.trick_positions, args.seed
        )
        row = time_trick_solves(name, positions)
        row["row"] = label
        report["rows"].append(row)
        target = ""
        if label.startswith("Forty-Fives 4p"):
            ok = "ok" if row["mean_s"] < TARGET_FF_SOLVE else "MISS"
            target = f"< {TARGET_FF_SOLVE * 1e3:.0f} ms mean  {ok}"
        print(
            f"{label:<40} {row['mean_s'] * 1e3:>8.1f}ms "
            f"{row['p95_s'] * 1e3:>8.1f}ms {row['max_s'] * 1e3:>8.1f}ms  {target}"
        )
    options = TRICK_GAMES[name][0][1]
    decisions = heuristic_positions(name, options, None, args.decisions, args.seed)
    for n in args.samples:
        r = time_trick_pimc(name, decisions, n, args.seed)
        r["row"] = f"pimc:{n} decision, {name}"
        report["rows"].append(r)
        print(
            f"{r['row']:<40} {r['mean_s'] * 1e3:>8.1f}ms {r['p95_s'] * 1e3:>8.1f}ms "
            f"{'':>10}  ({r['per_s']:.1f} decisions/s)"
        )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--positions",
        type=int,
        default=40,
        help="stage-2 start positions per variant (40)",
    )
    p.add_argument(
        "--source",
        choices=("play", "random"),
        default="play",
        help="stage-2 starts from heuristic play (default) or random 13/13 splits",
    )
    p.add_argument(
        "--samples",
        type=int,
        nargs="+",
        default=[1, 2, 4, 8],
        help="PIMC sample counts to time (1 2 4 8)",
    )
    p.add_argument(
        "--decisions",
        type=int,
        default=40,
        help="stage-1 decisions timed per sample count and variant (40)",
    )
    p.add_argument(
        "--variants",
        nargs="+",
        choices=("german", "honeymoon"),
        default=["german", "honeymoon"],
    )
    p.add_argument(
        "--no-german",
        dest="german",
        action="store_false",
        help="skip the German Whist / Honeymoon rows",
    )
    p.add_argument(
        "--games",
        nargs="*",
        choices=tuple(TRICK_GAMES),
        default=list(TRICK_GAMES),
        help="the other trick games to time (all; none: German Whist only)",
    )
    p.add_argument(
        "--trick-positions",
        type=int,
        default=20,
        help="positions per solve row of the other trick games (20)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", help="also write the figures to this JSON file")
    args = p.parse_args(argv)

    sg.SHARED.clear()
    report: dict[str, Any] = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "rows": [],
        "search": sg.SHARED.backend,  # numba or python (PARLOUR_JIT)
    }
    if report["search"] == "numba":  # loaded or compiled now, not in the first solve
        sg.jit.warm_up()
    print(
        f"Solver speed (CPU seconds; Python {report['python']}, source={args.source}, "
        f"{report['search']} search)"
    )
    print(f"{'row':<34} {'mean':>9} {'p95':>9} {'max':>9}  {'target':<18} result")
    for variant in args.variants if args.german else []:
        game, starts, decisions = heuristic_games(
            variant, max(args.positions, args.decisions // 8 + 1), args.seed
        )
        if args.source == "random":
            game, starts = random_starts(variant, args.positions, args.seed)
        row = time_solves(game, starts[: args.positions])
        row["row"] = f"stage-2 start, {variant}"
        report["rows"].append(row)
        target = f"< {TARGET_SOLVE:.0f} s mean" if variant == "german" else "(none)"
        ok = (
            ""
            if variant != "german"
            else ("ok" if row["mean_s"] < TARGET_SOLVE else "MISS")
        )
        print(
            f"{row['row']:<34} {row['mean_s'] * 1e3:>7.1f}ms "
            f"{row['p95_s'] * 1e3:>7.1f}ms "
            f"{row['max_s'] * 1e3:>7.1f}ms  {target:<18} {ok}"
        )
        for n in args.samples:
            r = time_pimc(game, decisions[: args.decisions + 3], n, args.seed)
            r["row"] = f"pimc:{n} decision, {variant}"
            report["rows"].append(r)
            arena = n == sg.DEFAULT_SAMPLES and variant == "german"
            target = f"~{TARGET_DECISION * 1e3:.0f} ms mean" if arena else ""
            ok = (
                ("ok" if r["mean_s"] <= TARGET_DECISION * 1.2 else "MISS")
                if arena
                else ""
            )
            print(
                f"{r['row']:<34} {r['mean_s'] * 1e3:>7.1f}ms "
                f"{r['p95_s'] * 1e3:>7.1f}ms "
                f"{'':>9}  {target:<18} {ok}  ({r['per_s']:.1f} decisions/s)"
            )
    for name in args.games:
        trick_game_rows(name, args, report)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2)
    return report


if __name__ == "__main__":
    main()
