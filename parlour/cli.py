"""The ``parlour`` command: list envs, play against a bot, run the arena, run the demo.

Every subcommand explains itself with ``--help``. Bad arguments print one clear line and
exit with status 2; nothing prints a traceback for a user's mistake.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

EXIT_USAGE = 2
DEMO_STEPS = 150_000
DEMO_TEACHER_GAMES = 1_000


class UsageError(Exception):
    """A user mistake: printed as one line, exit status 2."""


def parse_options(pairs: Sequence[str] | None) -> dict[str, Any]:
    """``["variant=honeymoon", "match_target=7"]`` -> ``{"variant": "honeymoon", ...}``.

    Values are read as YAML scalars, so numbers, booleans and ``null`` get their types.
    """
    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(
                f"bad option {pair!r}: write KEY=VALUE, e.g. variant=honeymoon"
            )
        try:
            out[key.strip()] = yaml.safe_load(value) if value.strip() else ""
        except yaml.YAMLError:
            out[key.strip()] = value
    return out


# --- list -----------------------------------------------------------------------------
def cmd_list(args: argparse.Namespace) -> int:
    from . import envs
    from .training import pretrained

    for name in envs.names():
        print(f"{name}: {env_description(name)}")
        for options in envs.VARIANTS.get(name, []):
            print("    -o " + " -o ".join(f"{k}={v}" for k, v in options.items()))
        print(f"    agents: {', '.join(agent_kinds(name))}")
        for directory in pretrained.models_of(name):
            print(f"    pretrained {directory.name}: {pretrained.summary(directory)}")
    print(
        "\nAgent specs: heuristic:-tip,+tip switches the bot's strategy tips; "
        "pretrained plays the\ngame's shipped agent (its card: parlour/models/NAME/"
        "card.md); ckpt:PATH plays a\ncheckpoint or a run directory's latest one "
        "(see README)."
    )
    return 0


def __getattr__(attr: str) -> Any:
    # EXTRA_KINDS (env name -> the agent kinds beyond random, heuristic and ckpt:PATH)
    # is a view of the game records' extra_kinds (parlour.envs.GameRecord).
    if attr == "EXTRA_KINDS":
        from . import envs

        return {r.name: list(r.extra_kinds) for r in envs.records()}
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


def env_description(name: str) -> str:
    """The first paragraph of an env package's docstring on one line, without the
    seed file's number."""
    import re

    from . import envs

    doc = (envs.module(name).__doc__ or "").strip().split("\n\n")[0]
    text = " ".join(doc.split())
    return re.sub(r"\s*\(seed \d+\)", "", text)


def agent_kinds(name: str) -> list[str]:
    """Every agent spec form the env accepts."""
    from . import envs

    record = envs.record(name)
    kinds = ["random"]
    if record.heuristic:
        kinds += ["heuristic", "heuristic:-tip,+tip"]
    kinds += record.extra_kinds
    if record.exact_moves:
        kinds.append("endgame:SPEC")
    from .training import pretrained

    if pretrained.models_of(name):
        kinds.append("pretrained")
    return [*kinds, "ckpt:PATH", "text:scripted"]


# --- arena ----------------------------------------------------------------------------
def cmd_arena(args: argparse.Namespace) -> int:
    from .training.arena import run_arena, save_json
    from .training.checkpoint import check_output_path

    _check_backend(args)
    if args.record and args.backend == "ray":
        raise UsageError(
            "--record writes each game from this process: use it without "
            "--backend ray"
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
        from .text import run_text_arena

        result = run_text_arena(args.env, args.agents, args.record, **common)
    else:
        result = run_arena(
            args.env,
            args.agents,
            backend=args.backend,
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


# --- play -----------------------------------------------------------------------------
def cmd_play(args: argparse.Namespace) -> int:
    from . import agents, envs
    from .agents.base import Turn

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


# --- train / eval ---------------------------------------------------------------------
def cmd_train(args: argparse.Namespace) -> int:
    from .training import backends

    backends.check(args.backend)  # before any config is read or file written
    backend_options: dict[str, Any] = {}
    if args.num_env_runners is not None:
        backend_options["num_env_runners"] = args.num_env_runners
    if args.address is not None:
        backend_options["address"] = args.address
    if args.backend == "rllib" and not args.verbose:
        _quiet_ray()
    from .training.train import (
        default_run_dir,
        load_config,
        resume_config,
        summary_table,
        train,
    )

    run_dir = args.run_dir
    if args.resume:
        # A resumed run keeps the config it was started with (config.json); --set
        # changes single keys on purpose, and each change is printed.
        if args.config or args.preset:
            raise UsageError(
                "--resume continues with the run's stored config: drop "
                "--config/--preset (change single keys with --set)"
            )
        if run_dir is None:
            run_dir = default_run_dir(load_config(None, env=args.env))
        config, changes = resume_config(run_dir, args.set or [])
        if config.env != args.env:
            raise UsageError(f"{run_dir} holds a {config.env} run, not {args.env}")
        for line in changes:
            print(f"resume with --set {line}")
    else:
        config = load_config(
            args.config, env=args.env, overrides=args.set or [], preset=args.preset
        )
    result = train(
        config,
        run_dir=run_dir,
        resume=args.resume,
        progress=not args.quiet,
        backend=args.backend,
        backend_options=backend_options,
    )
    again = []  # what the resume command needs besides the run directory
    if args.backend != backends.DEFAULT:
        again += ["--backend", args.backend]
    for key, value in backend_options.items():
        again += ["--" + key.replace("_", "-"), str(value)]
    _report_run(result, summary_table, args.env, again)
    return 130 if result.interrupted else 0


def _quiet_ray() -> None:
    """Ray's and RLlib's start-up notices (the new API stack, token auth, gputil,
    deprecations inside RLlib) would bury the progress bar: only their errors show."""
    import logging

    from .training.backends import ray_support

    if ray_support.ray_version() is None:
        return  # the backend's check says what to install
    import ray.rllib  # noqa: F401  (its loggers exist once it is imported)

    for name in list(logging.root.manager.loggerDict):
        if name == "ray" or name.startswith("ray."):
            logging.getLogger(name).setLevel(logging.ERROR)


def _report_run(result, summary_table, env: str, again: Sequence[str] = ()) -> None:
    if result.interrupted:
        if result.phase == "teacher games":
            print(
                "interrupted while playing the teacher's games: "
                f"{result.teacher_games:,}"
                f" kept in {result.run_dir / 'warm_start'}"
            )
        elif result.phase == "fit":
            print(
                f"interrupted during the fit: the {result.teacher_games:,} teacher "
                "games are kept, the fit starts again on resume"
            )
        else:
            print(
                f"interrupted at step {result.steps:,}; checkpoint saved: "
                f"{result.checkpoint}"
            )
        print(
            f"continue with: {parlour_command()} train {env} "
            + " ".join(shlex.quote(a) for a in again)
            + (" " if again else "")
            + "--resume --run-dir "
            + shlex.quote(str(result.run_dir))
        )
        return
    minutes = f"{result.seconds / 60:.1f} min"
    if result.session_seconds < result.seconds - 1:
        minutes += f" ({result.session_seconds / 60:.1f} min in this session)"
    print(f"trained {result.steps:,} steps in {minutes}")
    if result.phase_seconds:
        print(
            "time by phase: "
            + ", ".join(
                f"{name} {sec / 60:.1f} min"
                for name, sec in result.phase_seconds.items()
                if name != "done"
            )
        )
    print(summary_table(result))
    print(f"checkpoint: {result.checkpoint}")
    if result.plot is not None:
        print(f"learning curve: {result.plot}")


def cmd_eval(args: argparse.Namespace) -> int:
    from .training import checkpoint as ckpt_io
    from .training.arena import run_arena, save_json

    source = args.checkpoint
    if source.startswith("pretrained:"):
        from .training import pretrained

        source = str(pretrained.named(source.removeprefix("pretrained:")))
    ckpt = ckpt_io.load(source)
    if args.json:
        for opponent in args.vs:
            ckpt_io.check_output_path(
                _eval_json_path(args.json, opponent), what="--json"
            )
    options = ckpt.env_options
    options.update(parse_options(args.option))
    if args.stage2_quality and ckpt.env_name != "german_whist_v0":
        raise ValueError(
            f"--stage2-quality needs a german_whist_v0 checkpoint, got {ckpt.env_name}"
        )
    tables = []
    for opponent in args.vs:
        result = run_arena(
            ckpt.env_name,
            [f"ckpt:{ckpt.path}", opponent],
            games=args.games,
            duplicate=args.duplicate,
            seed=args.seed,
            env_options=options,
            progress=not args.quiet,
        )
        tables.append(result.table())
        if args.json:
            save_json(result, _eval_json_path(args.json, opponent))
    print(f"checkpoint {ckpt.path} ({ckpt.env_name}, step {ckpt.step})")
    print("\n\n".join(tables))
    if args.stage2_quality:
        print()
        print(_stage2_report(ckpt.path, args.stage2_quality, args.seed, options))
    return 0


def _eval_json_path(json_arg: str, opponent: str) -> str:
    """``--json out.json`` writes ``out-OPPONENT.json`` per opponent."""
    safe = opponent.replace(":", "_").replace("/", "_")
    return f"{json_arg.removesuffix('.json')}-{safe}.json"


def _stage2_report(path, games: int, seed: int, options: dict) -> str:
    """The checkpoint's stage-2 play scored against the exact solver."""
    from .agents.solver.german_whist import stage2_quality

    q = stage2_quality(f"ckpt:{path}", games=games, seed=seed, env_options=options)
    lines = [
        f"stage 2 against perfect play ({q.variant}, {q.games} games vs heuristic, "
        f"{q.decisions} decisions with a choice):",
        f"  optimal decisions         {q.optimal_fraction:.1%}",
        f"  critical: optimal         {q.critical_optimal_fraction:.1%} "
        f"of {q.critical}",
        f"  tricks lost per decision  {q.mean_tricks_lost:.3f}",
    ]
    if q.variant == "german":
        lines.append(f"  blunders / won positions  {q.blunders} / {q.won_positions}")
    return "\n".join(lines)


# --- tips -----------------------------------------------------------------------------
def cmd_tips(args: argparse.Namespace) -> int:
    from .training.checkpoint import check_output_path
    from .training.tips import run_tips

    _check_backend(args)
    check_output_path(args.out, directory=True, what="--out")

    run = run_tips(
        args.game,
        tips=args.tip,
        games=args.games,
        opponents=args.opponents,
        checkpoint=args.checkpoint,
        out=args.out,
        seed=args.seed,
        workers=args.workers,
        progress=not args.quiet,
        backend=args.backend,
        address=args.address,
    )
    print(run.summary())
    for path in run.paths.values():
        print(f"wrote {path}")
    return 0


# --- dice-table -----------------------------------------------------------------------
def cmd_dice_table(args: argparse.Namespace) -> int:
    from .agents.fuenfzehn_tot_solver import build_parser as solver_parser
    from .agents.fuenfzehn_tot_solver import main as solver_main
    from .training.checkpoint import check_output_path

    # the plot path is checked before the tables are computed
    plot = solver_parser("parlour dice-table").parse_args(args.rest).plot
    if plot:
        check_output_path(plot, what="--plot")
    return solver_main(args.rest, prog="parlour dice-table")


# --- demo -----------------------------------------------------------------------------
def cmd_demo(args: argparse.Namespace) -> int:
    import time

    from .training.train import load_config, summary_table, train

    run_dir = args.run_dir or f"runs/demo-{time.strftime('%Y%m%d-%H%M%S')}"
    overrides = [
        f"total_timesteps={args.steps}",
        f"eval_every={max(args.steps // 4, 1)}",
        f"checkpoint_every={max(args.steps // 4, 1)}",
        f"seed={args.seed}",
        f"eval_games={args.eval_games}",
    ]
    if args.steps < 4 * 512:
        # a budget below one rollout of the config (4 envs × 512 steps): shorter ones
        n_steps = max(1, args.steps // 4)
        overrides += [f"n_steps={n_steps}", f"batch_size={min(256, 4 * n_steps)}"]
    if args.teacher_games:
        # With the demo's few games the teacher's own stage-2 card is the better label:
        # solver labels (the config's warm_start_exact) pay off only with more data
        # (1,000 games: 0.82 against random with them, 0.90 without; docs/results.md).
        overrides += [
            f"warm_start_games={args.teacher_games}",
            "warm_start_epochs=10",
            "warm_start_exact=false",
        ]
    else:
        overrides.append("warm_start=''")
    config = load_config(None, env="german_whist_v0", overrides=overrides)
    warm = (
        f"imitation of the heuristic bot over {args.teacher_games:,} games, then "
        if args.teacher_games
        else ""
    )
    print(
        f"Parlour demo: {warm}self-play MaskablePPO on German Whist for "
        f"{args.steps:,} learner steps,\n"
        f"evaluated against random play and the heuristic bot on duplicate deals "
        f"({args.eval_games} games each).\n"
    )
    result = train(config, run_dir=run_dir, progress=not args.quiet)
    _report_run(result, summary_table, "german_whist_v0")
    if result.interrupted:
        return 130
    print(
        f"\nRun directory: {result.run_dir} (config, evaluations.csv, TensorBoard logs)"
    )
    print(
        f"Play against it: {parlour_command()} play german_whist_v0 "
        f"--opponent {shlex.quote(f'ckpt:{result.run_dir}')}"
    )
    return 0


def parlour_command() -> str:
    """The ``parlour`` being run, as the user can type it here: ``parlour`` when that
    is the one on PATH, else its path (``.venv/bin/parlour`` after ``make demo``), else
    ``python -m parlour.cli``."""
    import os
    import shutil

    exe = sys.argv[0] if sys.argv else ""
    if os.path.basename(exe) == "parlour" and os.path.isfile(exe):
        here = os.path.abspath(exe)
        on_path = shutil.which("parlour")
        if on_path and os.path.samefile(on_path, here):
            return "parlour"
        relative = os.path.relpath(here)
        return shlex.quote(relative if not relative.startswith("..") else here)
    return f"{shlex.quote(sys.executable)} -m parlour.cli"


# --- league ---------------------------------------------------------------------------
def cmd_league(args: argparse.Namespace) -> int:
    """``parlour league ENV --agents …`` plays and stores games; ``parlour league show
    ENV`` prints (and draws) the leaderboard fitted from the stored games."""
    import json

    from .training import league

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
    _check_backend(args)
    if args.plot and not args.plot.lower().endswith((".png", ".svg", ".pdf")):
        raise UsageError(f"--plot wants a .png, .svg or .pdf file, got {args.plot!r}")
    if not show:
        run = league.run_league(
            env_name,
            args.agents,
            games=args.games,
            db=args.db,
            env_options=options,
            backend=args.backend,
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
        print(json.dumps([b.as_dict() for b in boards], indent=2))
    elif args.markdown:
        print("\n\n".join(f"{b.title()}\n\n{b.markdown()}" for b in boards))
    else:
        print("\n\n".join(b.table() for b in boards))
    if args.plot:
        for i, board in enumerate(boards):
            path = args.plot if i == 0 else f"{args.plot[:-4]}-{i}{args.plot[-4:]}"
            print(f"wrote {board.plot(path)}", file=sys.stderr)
    return 0


def _add_league_parser(sub) -> None:
    from .training.league import DEFAULT_DB

    p = sub.add_parser(
        "league",
        help="rate many agents on one table: duplicate deals, SQLite, openskill",
        description="'parlour league ENV --agents A B C' plays every table of the "
        "agents (every pair; tables of 3-6 sides seat them in rotation) on duplicate "
        "deals in every seating and appends each game to a SQLite database; a re-run "
        "adds new deals. 'parlour league show ENV' prints the leaderboard fitted from "
        "the stored games: openskill Plackett-Luce ratings, win share and mean score "
        "with 95% CIs.",
        usage="parlour league ENV --agents SPEC [SPEC ...] [options]\n"
        "       parlour league show ENV [options]",
    )
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
        type=_positive_int,
        default=20,
        help="games per table this run, rounded up to whole deals (20)",
    )
    p.add_argument(
        "--db", default=DEFAULT_DB, metavar="PATH", help=f"database ({DEFAULT_DB})"
    )
    _add_backend_args(p, "batches of games")
    p.add_argument("--plot", metavar="FILE", help="draw the ratings (.png)")
    p.add_argument("--json", action="store_true", help="print the leaderboard as JSON")
    p.add_argument(
        "--markdown", action="store_true", help="print the leaderboard as Markdown"
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_league)


# --- backends -------------------------------------------------------------------------
def _add_backend_args(p: argparse.ArgumentParser, what: str) -> None:
    """``--backend local|ray`` and ``--address`` (docs/scale-out.md)."""
    p.add_argument(
        "--backend",
        choices=["local", "ray"],
        default="local",
        help=f"play here, or spread the {what} as Ray tasks; the results are the "
        "same (local)",
    )
    p.add_argument(
        "--address",
        metavar="ADDR",
        help="with --backend ray: the cluster's head node, HOST:PORT as 'ray start "
        "--head' prints it (default: start a local Ray)",
    )


def _check_backend(args: argparse.Namespace) -> None:
    """``--address`` without ``--backend ray`` is a usage error, said first."""
    from .training.distributed import check_backend

    check_backend(args.backend, args.address)


# --- parser ---------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="parlour",
        description="Card and dice games from old rule books as multi-agent RL "
        "environments.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("list", help="list the environments, their variants and bots")
    p.set_defaults(func=cmd_list)

    def env_arg(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "env", help="environment name, e.g. german_whist_v0 (see 'parlour list')"
        )
        p.add_argument(
            "-o",
            "--option",
            action="append",
            metavar="KEY=VALUE",
            help="environment option, repeatable (e.g. -o variant=honeymoon)",
        )

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
        "--games", type=_positive_int, default=200, help="games to play (200)"
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
    _add_backend_args(p, "deals")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_arena)

    p = sub.add_parser("play", help="play a game in the terminal against a bot")
    env_arg(p)
    p.add_argument(
        "--opponent", default="heuristic", help="the bots' agent spec (heuristic)"
    )
    p.add_argument("--seat", type=int, default=0, help="your seat (0)")
    p.add_argument(
        "--seed", type=int, default=0, help="seed for the deal and the bots (0)"
    )
    p.set_defaults(func=cmd_play)

    p = sub.add_parser(
        "train",
        help="self-play training (MaskablePPO by default)",
        description="Train a self-play agent. Hyperparameters come from "
        "configs/ENV.yaml (or --config) and --set overrides; the run directory gets "
        "the resolved config, checkpoints, evaluations.csv, TensorBoard logs and "
        "learning_curve.png.",
    )
    p.add_argument("env", help="environment name, e.g. german_whist_v0")
    p.add_argument(
        "--config", metavar="FILE", help="YAML config (default configs/ENV.yaml)"
    )
    p.add_argument(
        "--preset",
        metavar="NAME",
        help="a named config, configs/ENV.NAME.yaml (German Whist: strong, the "
        "recipe of docs/results.md, about 45 min)",
    )
    p.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override a config key, repeatable (e.g. total_timesteps=100000, "
        "env_options.variant=honeymoon)",
    )
    p.add_argument(
        "--run-dir", metavar="DIR", help="where to write (default runs/ENV-...)"
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --run-dir from its last completed phase, with the "
        "config it was started with (--set changes a key on purpose)",
    )
    p.add_argument(
        "--backend",
        default="sb3",
        metavar="NAME",
        help="the learning library (sb3: sb3-contrib's MaskablePPO; rllib: RLlib's "
        "PPO with env runners on Ray; parlour.training.backends lists them)",
    )
    p.add_argument(
        "--num-env-runners",
        type=_non_negative_int,
        default=None,
        metavar="N",
        help="--backend rllib: env-runner processes collecting self-play "
        "(default 2; 0 = in this process)",
    )
    p.add_argument(
        "--address",
        default=None,
        metavar="HOST:PORT",
        help="--backend rllib: join the Ray cluster there ('ray start --head' "
        "prints it) instead of starting a local Ray",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--verbose",
        action="store_true",
        help="--backend rllib: show Ray's and RLlib's warnings",
    )
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("eval", help="evaluate a checkpoint against bots")
    p.add_argument(
        "checkpoint",
        help="checkpoint directory or run directory, or pretrained:NAME (a shipped "
        "agent: the env's name for its default options, e.g. german_whist_v0, "
        "german_whist_v0.honeymoon)",
    )
    p.add_argument(
        "--vs",
        nargs="+",
        default=["random", "heuristic"],
        metavar="SPEC",
        help="opponent specs (random heuristic)",
    )
    p.add_argument(
        "--games", type=_positive_int, default=1000, help="games per opponent"
    )
    p.add_argument(
        "--duplicate", action="store_true", help="replay deals with seats swapped"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "-o",
        "--option",
        action="append",
        metavar="KEY=VALUE",
        help="env option override (normally taken from the checkpoint)",
    )
    p.add_argument(
        "--json", metavar="FILE", help="write results as JSON (one file per opponent)"
    )
    p.add_argument(
        "--stage2-quality",
        type=_positive_int,
        metavar="GAMES",
        help="German Whist only: also play GAMES games against the heuristic and score "
        "every stage-2 decision against the exact solver (optimal fraction, tricks "
        "lost vs perfect play)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser(
        "tips",
        help="test the seeds' strategy tips: duplicate A/B experiments with 95%% CIs",
        description="For each tip of GAME (german_whist, forty_fives, fuenfzehn_tot), "
        "the heuristic bot with the tip (A) against the same bot without it (B), over "
        "the same deals, seats rotated, against a pool of opponents; paired "
        "differences per deal with 95% intervals, a p-value and sequential stopping. "
        "Hypotheses come from configs/tips/ENV.yaml; writes GAME.md, GAME.png and "
        "GAME.json to --out. Fünfzehn – tot also gets the rules' arithmetic checked "
        "exactly and the seat order.",
    )
    p.add_argument(
        "game", help="german_whist, forty_fives or fuenfzehn_tot (or ENV_v0)"
    )
    p.add_argument(
        "--tip",
        action="append",
        metavar="NAME",
        help="test only this tip, repeatable (default: every tip of the game)",
    )
    p.add_argument(
        "--games",
        type=int,
        metavar="N",
        help="at most N duplicate deals per tip (default: the config's)",
    )
    p.add_argument(
        "--opponents",
        nargs="+",
        metavar="SPEC",
        help="the opponent pool (default: random heuristic)",
    )
    p.add_argument(
        "--checkpoint",
        metavar="PATH",
        help="add ckpt:PATH to the pool and measure its agreement with the tips",
    )
    p.add_argument(
        "--out",
        default="runs/tips",
        metavar="DIR",
        help="where to write the report, chart and JSON (runs/tips)",
    )
    p.add_argument("--seed", type=int, help="seed of the deals (default: the config's)")
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="W",
        help="worker processes of the local backend (default: the number of CPUs)",
    )
    _add_backend_args(p, "blocks of deals")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_tips)

    p = sub.add_parser(
        "dice-table",
        help="Fünfzehn – tot: the exact stop-or-roll table, win chances and a plot",
        add_help=False,
        # everything after the command goes to the solver's own parser
        prefix_chars="\0",
    )
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=cmd_dice_table)

    p = sub.add_parser(
        "demo",
        help="the main job on a small budget: train German Whist, evaluate, plot",
        description="Trains a German Whist agent with the default config on a short "
        "budget, evaluates it against random and heuristic play on duplicate deals, "
        "prints the table and says where the checkpoint and learning curve are.",
    )
    p.add_argument(
        "--steps",
        type=_positive_int,
        default=DEMO_STEPS,
        help=f"learner steps ({DEMO_STEPS:,})",
    )
    p.add_argument(
        "--eval-games",
        type=_positive_int,
        default=400,
        help="evaluation games per opponent (400)",
    )
    p.add_argument(
        "--teacher-games",
        type=_non_negative_int,
        default=DEMO_TEACHER_GAMES,
        help="games of the heuristic bot imitated before self-play "
        f"({DEMO_TEACHER_GAMES:,}; 0: no warm start)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--run-dir", metavar="DIR", help="where to write (default runs/demo-TIME)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_demo)

    _add_league_parser(sub)
    return parser


def _int_at_least(minimum: int, what: str):
    """An argparse type: an integer of at least ``minimum`` (``what`` names it)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {what}, got {value}")
        return value

    return parse


_positive_int = _int_at_least(1, "a positive integer")
_non_negative_int = _int_at_least(0, "a non-negative integer")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``parlour`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (UsageError, ValueError, FileNotFoundError) as err:
        print(f"parlour {args.command}: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`parlour list | head`): stop quietly, as Unix tools do;
        # stdout is pointed at devnull so the interpreter's final flush cannot fail
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
