"""Running a league: check its agents, then play every table's batches (here or as Ray
tasks) and store each batch as it ends.

Games are played and stored in batches of a few deals, one transaction per batch: a
crash or Ctrl-C loses at most the batch in progress. A table's deal counter lives in
the database, so a re-run (or a second league writing at the same time) continues with
deals that table has not played.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import envs
from ..training import distributed
from ..training.arena import teams_of
from .identity import identify
from .schedule import BATCH_DEALS, Batch, play_batch, play_batch_task, tables_for
from .store import (
    DEFAULT_DB,
    LeagueError,
    claim_deals,
    connect,
    dumps,
    insert_games,
    options_key,
)


@contextmanager
def _ctrl_c_held() -> Iterator[None]:
    """Hold a Ctrl-C that arrives inside the block until the block ends.

    A batch is committed and then counted; a Ctrl-C between the two would leave a
    stored batch out of the count the run reports. Only the main thread can hold it,
    and only Python's own SIGINT handler is replaced (another one is left as it is).
    """
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    caught: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if caught:
        raise KeyboardInterrupt


@dataclass
class LeagueRun:
    """What a `run_league` call did."""

    env_name: str
    options: str
    tables: list[tuple[str, ...]]
    planned: int  # games this run meant to play
    stored: int = 0  # games it stored
    interrupted: bool = False


def prepare(
    env_name: str,
    specs: Sequence[str],
    env_options: Mapping[str, Any] | None = None,
) -> tuple[str, dict[str, str], dict[str, str], int]:
    """Check a league's input before any game: the env and its options, every agent spec
    (each is built once). Returns the options key, name -> spec, name -> checkpoint
    hash and the number of sides."""
    env_options = dict(env_options or {})
    opts = options_key(env_name, env_options)
    game = envs.make(env_name, raw=True, **env_options).game
    sides = len(teams_of(game))
    if len(specs) < 2:
        raise LeagueError(f"a league needs at least two agents, got {len(specs)}")
    by_name: dict[str, str] = {}
    hashes: dict[str, str] = {}
    for spec in specs:
        name, digest = identify(spec, env_name, env_options)
        if name in by_name:
            raise LeagueError(
                f"agents {by_name[name]!r} and {spec!r} are the same agent ({name})"
            )
        by_name[name] = spec
        if digest is not None:
            hashes[name] = digest
    return opts, by_name, hashes, sides


def run_league(
    env_name: str,
    specs: Sequence[str],
    games: int = 20,
    db: str | Path = DEFAULT_DB,
    env_options: Mapping[str, Any] | None = None,
    executor: str = "local",
    address: str | None = None,
    batch_deals: int = BATCH_DEALS,
    progress: bool = False,
    ray_init: Mapping[str, Any] | None = None,
    *,
    backend: str | None = None,
) -> LeagueRun:
    """Play ``games`` more games at every table (rounded up to whole deals, one game per
    seating) and append them to the database ``db``.

    ``executor="ray"`` plays the batches as Ray tasks (`parlour.training.distributed`:
    a local Ray of its own, or the cluster at ``address``; ``ray_init`` adds
    `ray.init` keyword arguments; checkpoints travel as weights). Ctrl-C stops the
    league; every finished batch is kept and the run says it was interrupted.
    ``backend=`` is the old name of ``executor=`` (deprecated).
    """
    if not isinstance(games, int) or games < 1:
        raise LeagueError(f"games must be a positive integer, got {games!r}")
    if not isinstance(batch_deals, int) or batch_deals < 1:
        raise LeagueError(
            f"batch_deals must be a positive integer, got {batch_deals!r}"
        )
    executor = distributed.executor_of(executor, backend)
    session = distributed.session_for(executor, address, ray_init)
    env_options = dict(env_options or {})
    opts, by_name, hashes, sides = prepare(env_name, specs, env_options)
    if session is not None:
        # started before the database is opened: a cluster that refuses us leaves
        # no file behind
        session.begin(by_name.values(), announce=progress)
    try:
        conn = connect(db)
    except BaseException:
        if session is not None:
            session.close()
        raise
    tables = tables_for(list(by_name), sides)
    deals = -(-games // sides)
    run = LeagueRun(env_name, opts, tables, planned=len(tables) * deals * sides)

    def batches() -> Iterator[Batch]:
        # round-robin over the tables, so a stopped league has played all of them
        for first in range(0, deals, batch_deals):
            n = min(batch_deals, deals - first)
            for table in tables:
                pairing = dumps(list(table))
                start = claim_deals(conn, env_name, opts, pairing, n)
                yield Batch(
                    env_name,
                    env_options,
                    opts,
                    table,
                    {name: by_name[name] for name in table},
                    {name: hashes[name] for name in table if name in hashes},
                    start,
                    n,
                )

    bar = None
    if progress:
        from ..progress import progress_bar

        bar = progress_bar(total=run.planned, desc=f"league {env_name}", unit="game")

    def store(_: int, rows: list[dict[str, Any]]) -> None:
        with _ctrl_c_held():
            insert_games(conn, rows)
            run.stored += len(rows)
        if bar is not None and session is not None:
            bar.update(len(rows))

    try:
        if session is None:
            for batch in batches():
                store(0, play_batch(batch, bar.update if bar is not None else None))
        else:
            session.spread(play_batch_task, batches(), store)
    except KeyboardInterrupt:
        run.interrupted = True
    finally:
        if bar is not None:
            bar.close()
        conn.close()
        if session is not None:
            session.close()
    return run
