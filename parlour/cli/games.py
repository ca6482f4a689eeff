"""``parlour list``, ``parlour play`` (the terminal game) and ``parlour dice-table``."""

from __future__ import annotations

import argparse
import sys

from .common import (
    Command,
    UsageError,
    env_arg,
    parse_options,
)


def cmd_list(args: argparse.Namespace) -> int:
    from .. import envs
    from ..training import pretrained

    for name in envs.names():
        print(f"{name}: {env_description(name)}")
        for options in envs.VARIANTS.get(name, []):
            print("    -o " + " -o ".join(f"{k}={v}" for k, v in options.items()))
        print(f"    agents: {', '.join(agent_kinds(name))}")
        for directory in pretrained.models_of(name):
            print(f"    pretrained {directory.name}: {pretrained.summary(directory)}")
    print(
        "\nAgent specs: heuristic:-tip,+tip switches the bot's strategy tips; "
        "pretrained plays the\ngame's shipped agent for its options, "
        "pretrained:NAME the one named above (its card:\nparlour/models/NAME/"
        "card.md); expert plays the shipped agent\nwith the game's search at play "
        "time, the strongest player Parlour ships (docs/solvers.md);\nckpt:PATH plays "
        "a checkpoint or a run directory's latest one (see README)."
    )
    return 0


def env_description(name: str) -> str:
    """The first paragraph of an env package's docstring on one line, without the
    seed file's number."""
    import re

    from .. import envs

    doc = (envs.module(name).__doc__ or "").strip().split("\n\n")[0]
    text = " ".join(doc.split())
    return re.sub(r"\s*\(seed \d+\)", "", text)


def agent_kinds(name: str) -> list[str]:
    """Every agent spec form the env accepts (from `parlour.agents.spec`'s table)."""
    from ..agents.spec import forms

    return forms(name)


def cmd_play(args: argparse.Namespace) -> int:
    from .. import agents, envs
    from ..agents.base import Turn

    options = parse_options(args.option)
    env = envs.make(args.env, **options)
    raw = env.unwrapped
    game = raw.game
    if not 0 <= args.seat < game.num_players:
        raise UsageError(f"--seat must be 0..{game.num_players - 1}, got {args.seat}")
    bots = {
        s: agents.make(args.opponent, args.env, seed=args.seed + s, env_options=options)
        for s in range(game.num_players)
        if s != args.seat
    }
    env.reset(seed=args.seed)
    if hasattr(sys.stdin, "reconfigure"):
        # bytes that are not text in the terminal's encoding are read as U+FFFD (and
        # refused as a move) rather than ending the game with a decoding error
        sys.stdin.reconfigure(errors="replace")
    you = raw.possible_agents[args.seat]
    print(f"You are {you}. Type a move by name (e.g. QS), 'help', or 'quit'.\n")
    totals = {a: 0.0 for a in raw.possible_agents}
    for name in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        totals[name] += reward
        if terminated or truncated:
            env.step(None)
            continue
        seat = raw.agent_name_mapping[name]
        if seat != args.seat:
            turn = Turn(
                game, raw.game_state, seat, obs["observation"], obs["action_mask"]
            )
            action = bots[seat].act(turn)
            print(f"{name} plays {game.action_name(action)}")
            env.step(action)
            continue
        print()
        print(game.render(raw.game_state, viewer=args.seat))
        legal = raw.legal_actions(name)
        action = _ask_move(game, legal)
        if action is None:
            print("Bye.")
            return 0
        env.step(action)
    print()
    print(game.render(raw.game_state, viewer=args.seat))
    mine = totals[you]
    verdict = "You win" if mine > 0 else "You lose" if mine < 0 else "Draw"
    print(f"{verdict} (reward {mine:+g}).")
    return 0


def _ask_move(game, legal: list[int]) -> int | None:
    names = [game.action_name(a) for a in legal]
    while True:
        print("Legal: " + " ".join(names))
        try:
            text = input("your move> ").strip()
        except EOFError:
            return None
        if len(text) > 60:
            # a pasted page: the refusal would echo all of it
            print(f"Not understood: {len(text):,} characters is no move's name.")
            continue
        if text.lower() in ("quit", "exit", "q"):
            return None
        if text.lower() in ("help", "?", ""):
            print("Type one of the legal moves above (case and T for 10 are accepted).")
            continue
        try:
            action = game.action_id(text)
        except ValueError as err:
            print(f"Not understood: {err}")
            continue
        if action not in legal:
            print(f"{game.action_name(action)} is not legal now.")
            continue
        return action


def cmd_dice_table(args: argparse.Namespace) -> int:
    from ..agents.fuenfzehn_tot_solver import build_parser as solver_parser
    from ..agents.fuenfzehn_tot_solver import main as solver_main
    from ..paths import prepare_output_file

    # the plot path is checked before the tables are computed
    plot = solver_parser("parlour dice-table").parse_args(args.rest).plot
    if plot is not None:
        prepare_output_file(plot, what="--plot")
    return solver_main(args.rest, prog="parlour dice-table")


def _play_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``parlour play``."""
    env_arg(p)
    p.add_argument(
        "--opponent", default="heuristic", help="the bots' agent spec (heuristic)"
    )
    p.add_argument("--seat", type=int, default=0, help="your seat (0)")
    p.add_argument(
        "--seed", type=int, default=0, help="seed for the deal and the bots (0)"
    )


def _dice_table_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``parlour dice-table``."""
    p.add_argument("rest", nargs=argparse.REMAINDER)


#: the subcommands of this module (`parlour.cli.build_parser` adds them)
COMMANDS = (
    Command(
        "list",
        cmd_list,
        help="list the environments, their variants and bots",
    ),
    Command(
        "play",
        cmd_play,
        help="play a game in the terminal against a bot",
        arguments=_play_arguments,
    ),
    Command(
        "dice-table",
        cmd_dice_table,
        help="Fünfzehn – tot: the exact stop-or-roll table, win chances and a plot",
        add_help=False,
        # everything after the command goes to the solver's own parser
        prefix_chars="\0",
        arguments=_dice_table_arguments,
    ),
)
