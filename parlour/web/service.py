"""What the web app does, without HTTP: start, load, move and finish games, watch bots,
find a stored game's moves for a replay, and read the leaderboard.

`Parlour` keeps the games being played in memory (each behind its own lock) and
writes every move to the database before the page answers, so a restarted server
picks a game up where it was. Errors are one-line exceptions that the app turns into
4xx pages: `NotFound` (404), `Conflict` (409: a finished or stale game, a replay that
cannot be made), `ValueError` (400: bad input, an agent off the list, an illegal
move).
"""

from __future__ import annotations

import random
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import envs
from .allow import AllowList
from .games import (
    GameOver,
    LiveGame,
    StaleMove,
    Table,
    build_bots,
    check_options,
    replay_table,
)
from .store import Store, league_seat_specs, new_id

#: games kept in memory at once; the least recently used are dropped (and rebuilt
#: from the database when asked for again)
LIVE_GAMES = 512
#: moves a watched game may have before the server stops it (a bot that never ends)
MAX_MOVES = 20_000
HUMAN = "human"


class NotFound(LookupError):
    """An unknown env, game or replay id."""


class Conflict(ValueError):
    """A request that does not fit the game's state: over, stale, not replayable."""


def known_env(env_name: str) -> str:
    """``env_name`` if it is a registered env, else `NotFound`."""
    if env_name not in envs.names():
        raise NotFound(f"no game {env_name!r}; games: {', '.join(envs.names())}")
    return env_name


class Parlour:
    """The server's games: a `Store`, the agents' `AllowList` and the live games."""

    def __init__(
        self,
        db: str | Path,
        model_dirs: Sequence[str | Path] = (),
        records: Sequence[str | Path] = (),
    ):
        self.allow = AllowList(model_dirs)
        self.store = Store(db)
        self.imported = self.store.import_records(records)
        self._live: OrderedDict[str, LiveGame] = OrderedDict()
        self._lock = threading.Lock()
        # league replays are expensive (bots play the deal again): one at a time each
        self._league_locks: dict[int, threading.Lock] = {}

    # --- playing ----------------------------------------------------------------------
    def new_game(
        self,
        env_name: str,
        options: Mapping[str, Any],
        opponents: Sequence[str],
        seat: int = 0,
        seed: int | None = None,
    ) -> LiveGame:
        """Start a game with the browser at ``seat`` and bots (one spec for all, or one
        per other seat in seat order) elsewhere; the bots move until it is the
        browser's turn."""
        known_env(env_name)
        options = check_options(env_name, options)
        n = envs.make(env_name, raw=True, **options).game.num_players
        if not 0 <= seat < n:
            raise ValueError(f"seat must be 0..{n - 1} for this game, got {seat}")
        opponents = list(opponents) or ["heuristic"]
        if len(opponents) == 1:
            opponents = opponents * (n - 1)
        if len(opponents) != n - 1:
            raise ValueError(
                f"give one opponent for all or {n - 1} (one per other seat), got "
                f"{len(opponents)}"
            )
        bots = iter(opponents)
        seats = [HUMAN if s == seat else next(bots) for s in range(n)]
        seed = random.SystemRandom().randrange(2**31) if seed is None else seed
        live = self._build(new_id("play"), env_name, options, seed, seats, seat, [])
        live.advance()
        self.store.insert(
            live.id,
            "play",
            env_name,
            options,
            seed,
            seats,
            live.move_names,
            human=seat,
            scores=live.table.returns() if live.table.over else None,
        )
        self._remember(live)
        return live

    def _build(
        self,
        game_id: str,
        env_name: str,
        options: Mapping[str, Any],
        seed: int,
        seats: Sequence[str],
        human: int,
        moves: Sequence[str],
    ) -> LiveGame:
        specs = [
            None if s == human else self.allow.resolve(spec, env_name)
            for s, spec in enumerate(seats)
        ]
        agents = build_bots(env_name, options, specs, seed)
        table = replay_table(env_name, options, seed, moves)
        return LiveGame(
            game_id, env_name, dict(options), seed, list(seats), human, agents, table
        )

    def _remember(self, live: LiveGame) -> LiveGame:
        """Keep ``live`` in memory, unless a game of its id is kept already; returns
        the one kept."""
        with self._lock:
            kept = self._live.setdefault(live.id, live)
            self._live.move_to_end(live.id)
            while len(self._live) > LIVE_GAMES:
                self._live.popitem(last=False)
        return kept

    def game(self, game_id: str) -> LiveGame:
        """A game played in the browser, from memory or rebuilt from the database."""
        with self._lock:
            live = self._live.get(game_id)
            if live is not None:
                self._live.move_to_end(game_id)
                return live
        row = self.store.get(game_id)
        if row is None or row["kind"] != "play":
            raise NotFound(f"no game {game_id!r} on this server")
        try:
            live = self._build(
                row["id"],
                row["env"],
                row["options"],
                row["seed"],
                row["seats"],
                row["human"],
                row["moves"],
            )
        except ValueError as err:
            raise Conflict(f"game {game_id} cannot be resumed here: {err}") from None
        # two requests may have rebuilt the game at once: both play the first one kept
        return self._remember(live)

    def move(self, game_id: str, name: str, ply: int) -> LiveGame:
        """The browser's move ``name`` in game ``game_id`` from a page at move
        ``ply``; the bots answer and every move is stored."""
        live = self.game(game_id)
        with live.lock:
            before = len(live.table.moves)
            try:
                live.human_move(name, ply)
            except (GameOver, StaleMove) as err:
                raise Conflict(str(err)) from None
            finally:
                # a refused move plays nothing; whatever was played is stored
                if len(live.table.moves) != before:
                    self.store.update_moves(
                        live.id,
                        live.move_names,
                        live.table.returns() if live.table.over else None,
                    )
        return live

    # --- watching ---------------------------------------------------------------------
    def watch(
        self,
        env_name: str,
        options: Mapping[str, Any],
        specs: Sequence[str],
        seed: int | None = None,
    ) -> str:
        """Bots play a whole game (one spec per seat, or per side in rotation when
        fewer are given); returns the stored game's id for the replay page."""
        known_env(env_name)
        options = check_options(env_name, options)
        game = envs.make(env_name, raw=True, **options).game
        n = game.num_players
        if len(specs) < 2:
            raise ValueError("give at least two agents to watch")
        if len(specs) > n:
            raise ValueError(f"this game has {n} seats, got {len(specs)} agents")
        seats = [specs[s % len(specs)] for s in range(n)]
        resolved = [self.allow.resolve(spec, env_name) for spec in seats]
        seed = random.SystemRandom().randrange(2**31) if seed is None else seed
        agents = build_bots(env_name, options, resolved, seed)
        table = Table(env_name, options, seed)
        while not table.over:
            if len(table.moves) >= MAX_MOVES:
                raise Conflict(f"the bots did not finish in {MAX_MOVES} moves")
            table.bot_move(agents[table.to_act])
        game_id = new_id("watch")
        self.store.insert(
            game_id,
            "watch",
            env_name,
            options,
            seed,
            seats,
            [name for _, name in table.moves],
            scores=table.returns(),
        )
        return game_id

    # --- replays ----------------------------------------------------------------------
    def replay_game(self, game_id: str) -> dict[str, Any]:
        """A finished stored game (web game, imported record, or league game ``L<id>``)
        as a dict with its env, options, seed, seats and moves."""
        row = self.store.get(game_id)
        if row is None and game_id.startswith("L") and game_id[1:].isdigit():
            row = self._league_replay(int(game_id[1:]))
        if row is None:
            raise NotFound(f"no stored game {game_id!r}")
        if row["scores"] is None:
            # a game in progress would show the browser's opponents' cards
            raise Conflict(f"game {game_id} is not over yet: finish it first")
        return row

    def _league_replay(self, row_id: int) -> dict[str, Any] | None:
        with self._lock:
            lock = self._league_locks.setdefault(row_id, threading.Lock())
        with lock:
            cached = self.store.get(f"L{row_id}")
            if cached is not None:
                return cached
            league_row = self.store.league_row(row_id)
            if league_row is None:
                return None
            env_name, options = league_row["env"], league_row["options"]
            specs = []
            models = {p.resolve(): name for name, p in self.allow.models.items()}
            for spec in league_seat_specs(league_row):
                kind, _, arg = spec.partition(":")
                if kind == "ckpt" and Path(arg).resolve() in models:
                    specs.append(spec)
                    continue
                try:
                    specs.append(self.allow.resolve(spec, env_name))
                except ValueError:
                    raise Conflict(
                        f"league game {row_id}: agent {spec!r} is not available to "
                        "this server (a checkpoint needs its directory in --models)"
                    ) from None
            seed = int(league_row["seed"])
            try:
                agents = build_bots(env_name, options, specs, seed)
            except ValueError as err:
                raise Conflict(f"league game {row_id}: {err}") from None
            table = Table(env_name, options, seed)
            while not table.over:
                table.bot_move(agents[table.to_act])
            if not np.allclose(table.returns(), league_row["returns"]):
                raise Conflict(
                    f"league game {row_id} played again ends {table.returns()}, the "
                    f"league stored {league_row['returns']}: its agents changed since"
                )
            self.store.insert(
                f"L{row_id}",
                "league",
                env_name,
                options,
                seed,
                league_row["seats"],
                [name for _, name in table.moves],
                scores=table.returns(),
                source=f"league game {row_id}",
            )
            return self.store.get(f"L{row_id}")

    def replay_table(self, row: Mapping[str, Any], upto: int) -> Table:
        """The stored game ``row`` after its first ``upto`` moves."""
        try:
            return replay_table(
                row["env"],
                row["options"],
                row["seed"],
                row["moves"],
                row["reset_options"],
                upto=upto,
            )
        except ValueError as err:
            raise Conflict(f"game {row['id']} cannot be replayed: {err}") from None

    # --- the league -------------------------------------------------------------------
    def leaderboards(self, env_name: str) -> list[Any]:
        """The league's leaderboards of ``env_name``; `NotFound` when it has none."""
        known_env(env_name)
        try:
            return self.store.leaderboards(env_name)
        except ValueError as err:
            raise NotFound(str(err)) from None


__all__ = ["Conflict", "NotFound", "Parlour", "known_env"]
