"""The league: every agent against every other on duplicate deals, each game kept in a
SQLite database, and one rating per agent fitted from all of them.

A game has ``k`` sides (its partnerships, else one per seat; `arena.teams_of`). A
*table* is ``k`` agents, one per side: every pair of agents when ``k = 2``; for 3–6
sides the agents are seated in rotation (table ``i`` is agents ``i, i+1, …, i+k-1`` of
the list, wrapping round, so a short list fills a big table). Each deal of a table is
played once per seating (the agents rotate through the sides, as the arena's duplicate
mode rotates the candidate), so every agent holds every side's cards.

Deal ``j`` of a table has the seed `deal_seed(j)`: the same cards at every table, and a
table's deal counter lives in the database, so a re-run (or a second league writing at
the same time) continues with deals that table has not played. Games are played and
stored in batches of a few deals, one transaction per batch: a crash or Ctrl-C loses at
most the batch in progress.

Ratings: openskill's Plackett–Luce model, updated game by game in the order stored, each
side a team of the agents in its seats, ranked by its score (the mean return of its
seats); plus each agent's share of the wins (Wilson 95% CI) and mean score (95% CI).
"""

from __future__ import annotations

import inspect
import itertools
import json
import math
import re
import sqlite3
import textwrap
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__, envs
from .. import agents as agents_mod
from . import distributed
from .arena import play_game, teams_of, win_share
from .distributed import ShippedCheckpoint, worker_agent, worker_env
from .stats import Interval, mean_interval, wilson

DEFAULT_DB = "runs/league.sqlite"
#: ``PRAGMA application_id`` of a league database ("PlrL"): tells ours from other files
APPLICATION_ID = 0x506C724C
#: seconds a writer waits for another's transaction before giving up
BUSY_TIMEOUT = 120.0
#: deals per batch (each deal is played once per seating)
BATCH_DEALS = 4

# Each entry moves the schema up one version (``PRAGMA user_version``); a database is
# brought up to date when it is opened. Never edit an entry, append a new one.
MIGRATIONS: list[list[str]] = [
    # 1: the games
    [
        """CREATE TABLE games (
            id INTEGER PRIMARY KEY,
            env TEXT NOT NULL,
            options TEXT NOT NULL,   -- JSON: the game options, defaults filled in
            pairing TEXT NOT NULL,   -- JSON: the table's agents, one per side
            deal INTEGER NOT NULL,   -- the deal's index for this pairing
            seed INTEGER NOT NULL,   -- env seed of the deal
            seating INTEGER NOT NULL,
            seats TEXT NOT NULL,     -- JSON: agent per seat
            hashes TEXT NOT NULL,    -- JSON: checkpoint agent -> weights SHA-256
            teams TEXT NOT NULL,     -- JSON: the seats of each side
            returns TEXT NOT NULL,   -- JSON: total reward per seat
            scores TEXT,             -- JSON: the game's final scores, if it keeps any
            info TEXT NOT NULL,      -- JSON: the engine's public info at the end
            version TEXT NOT NULL,   -- Parlour version that played it
            played_at TEXT NOT NULL,
            UNIQUE (env, options, pairing, deal, seating)
        )""",
    ],
    # 2: a deal counter per pairing, claimed before a batch is played, so concurrent
    # leagues never play the same deal twice; filled from the games already stored.
    [
        """CREATE TABLE pairings (
            env TEXT NOT NULL,
            options TEXT NOT NULL,
            pairing TEXT NOT NULL,
            next_deal INTEGER NOT NULL,
            PRIMARY KEY (env, options, pairing)
        )""",
        """INSERT INTO pairings (env, options, pairing, next_deal)
            SELECT env, options, pairing, MAX(deal) + 1 FROM games
            GROUP BY env, options, pairing""",
        "CREATE INDEX games_by_env ON games (env, options, id)",
    ],
]
SCHEMA_VERSION = len(MIGRATIONS)


class LeagueError(ValueError):
    """A bad league database or bad league input; the message is one line."""


# --- the database ---------------------------------------------------------------------
def connect(path: str | Path, create: bool = True) -> sqlite3.Connection:
    """Open (or create) a league database, bring its schema up to date, and return the
    connection (autocommit; WAL; writers wait up to `BUSY_TIMEOUT`).

    Refuses, with a one-line `LeagueError`, a file that is not a SQLite database, a
    corrupt one, a SQLite database that is not a league's, and one from a newer
    Parlour.
    """
    path = Path(path)
    if path.is_dir():
        raise LeagueError(f"{path} is a directory, not a league database file")
    if not path.exists():
        if not create:
            raise LeagueError(
                f"no league database at {path} (run 'parlour league' first)"
            )
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise LeagueError(f"cannot create {path.parent}: {err.strerror}") from None
    elif path.stat().st_size:
        with path.open("rb") as fh:
            head = fh.read(16)
        if head != b"SQLite format 3\x00":
            raise LeagueError(f"{path} is not a SQLite database; refusing to touch it")
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None)
    except sqlite3.Error as err:
        raise LeagueError(f"cannot open {path}: {err}") from None
    try:
        _check_and_migrate(conn, path)
    except sqlite3.DatabaseError as err:
        conn.close()
        if "locked" in str(err):
            raise LeagueError(
                f"{path} stayed locked by another writer for {BUSY_TIMEOUT:g} s"
            ) from None
        raise LeagueError(f"{path} is not a readable league database ({err})") from None
    except BaseException:
        conn.close()
        raise
    return conn


def _check_and_migrate(conn: sqlite3.Connection, path: Path) -> None:
    def identity() -> tuple[int, int, list[str]]:
        app = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = [
            r[0]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
        ]
        return app, version, tables

    def refuse_foreign(app: int, version: int, tables: list[str]) -> None:
        if tables and app != APPLICATION_ID:
            raise LeagueError(
                f"{path} is a SQLite database but not a Parlour league "
                f"(tables: {', '.join(sorted(tables)[:5])}); refusing to touch it"
            )
        if version > SCHEMA_VERSION:
            raise LeagueError(
                f"{path} has league schema version {version}, newer than this "
                f"Parlour's {SCHEMA_VERSION}; upgrade Parlour"
            )

    # Look before writing anything (WAL mode is written to the file).
    refuse_foreign(*identity())
    problems = [r[0] for r in conn.execute("PRAGMA quick_check")]
    if problems != ["ok"]:
        raise LeagueError(f"{path} is corrupt (integrity check: {problems[0]})")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT * 1000)}")
    if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        # another writer may have migrated between our look and our lock
        app, version, tables = identity()
        refuse_foreign(app, version, tables)
        if not tables:
            conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
        for statements in MIGRATIONS[version:]:
            for sql in statements:
                conn.execute(sql)
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def schema_version(conn: sqlite3.Connection) -> int:
    """The schema version of an open database."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def options_key(env_name: str, options: Mapping[str, Any] | None) -> str:
    """The stored form of an env's options: its game options with defaults filled in,
    as sorted JSON, so ``-o variant=german`` and no option are the same league."""
    return _dumps(envs.game_options(env_name, dict(options or {})))


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=_json_default)


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray | tuple | set | frozenset):
        return list(value)
    return str(value)


def claim_deals(
    conn: sqlite3.Connection, env_name: str, opts: str, pairing: str, n: int
) -> int:
    """Reserve the next ``n`` deal indices of a pairing; returns the first."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = conn.execute(
            "SELECT next_deal FROM pairings WHERE env=? AND options=? AND pairing=?",
            (env_name, opts, pairing),
        ).fetchone()
        start = row[0] if row else 0
        conn.execute(
            "INSERT INTO pairings (env, options, pairing, next_deal) VALUES (?,?,?,?) "
            "ON CONFLICT (env, options, pairing) "
            "DO UPDATE SET next_deal=excluded.next_deal",
            (env_name, opts, pairing, start + n),
        )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return start


_COLUMNS = (
    "env options pairing deal seed seating seats hashes teams returns scores info "
    "version played_at"
).split()


def insert_games(conn: sqlite3.Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Store one batch of games in one transaction."""
    sql = (
        f"INSERT INTO games ({', '.join(_COLUMNS)}) "
        f"VALUES ({', '.join('?' * len(_COLUMNS))})"
    )
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany(sql, [tuple(r[c] for c in _COLUMNS) for r in rows])
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def count_games(conn: sqlite3.Connection, env_name: str | None = None) -> int:
    """Games stored (for one env, or all)."""
    if env_name is None:
        return conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    return conn.execute(
        "SELECT COUNT(*) FROM games WHERE env=?", (env_name,)
    ).fetchone()[0]


# --- agents and tables ----------------------------------------------------------------
def heuristic_switches(env_name: str) -> list[str]:
    """The on/off switches (strategy tips) of an env's heuristic bot, in order."""
    cls = agents_mod.heuristic_class(env_name)
    if hasattr(cls, "SWITCHES"):
        return list(cls.SWITCHES)
    return [
        name
        for name, p in inspect.signature(cls.__init__).parameters.items()
        if p.kind is p.KEYWORD_ONLY and p.default is True
    ]


_PRETRAINED = re.compile(r"(?:^|:)pretrained(@sample)?$")


def checkpoint_hash(
    spec: str,
    env_name: str | None = None,
    env_options: Mapping[str, Any] | None = None,
) -> str | None:
    """The weights SHA-256 of a spec's checkpoint (``ckpt:PATH``, also inside
    ``endgame:``; ``pretrained`` too when ``env_name`` is given: the shipped model
    for ``env_options``, which changes between versions of Parlour), or None for an
    agent without one."""
    path = distributed.checkpoint_path(spec)
    if path is None:
        if env_name is not None and _PRETRAINED.search(spec):
            from . import pretrained

            return str(pretrained.manifest(env_name, env_options)["weights_sha256"])
        return None
    from . import checkpoint as ckpt_io

    manifest = ckpt_io.resolve(path) / ckpt_io.MANIFEST
    return str(json.loads(manifest.read_text())["weights_sha256"])


def agent_name(spec: str, digest: str | None) -> str:
    """An agent's name in the league: its spec, plus the checkpoint hash if it has one
    (a run directory's latest checkpoint changes as training goes on)."""
    return spec if digest is None else f"{spec}#{digest[:12]}"


def canonical_table(table: Sequence[str]) -> tuple[str, ...]:
    """A table up to rotation (all its seatings are played): its smallest rotation."""
    k = len(table)
    return min(tuple(table[(i + r) % k] for i in range(k)) for r in range(k))


def tables_for(names: Sequence[str], sides: int) -> list[tuple[str, ...]]:
    """The tables of a league: every pair for two sides; for more, the agents seated in
    rotation (one table per agent, wrapping round the list)."""
    if sides == 2:
        tables = [canonical_table(p) for p in itertools.combinations(names, 2)]
    elif len(names) == sides:
        tables = [canonical_table(names)]
    else:
        n = len(names)
        tables = [
            canonical_table([names[(i + j) % n] for j in range(sides)])
            for i in range(n)
        ]
    return list(dict.fromkeys(tables))


def deal_seed(index: int) -> int:
    """The env seed of deal ``index`` (the same for every table)."""
    return int(np.random.SeedSequence([0x1EA6, index]).generate_state(1)[0])


def seating_sides(table: Sequence[str], seating: int) -> list[str]:
    """Agent per side in a seating: the table rotated by ``seating`` sides."""
    k = len(table)
    return [table[(i + seating) % k] for i in range(k)]


# --- playing --------------------------------------------------------------------------
@dataclass(frozen=True)
class Batch:
    """A few deals of one table: what a worker needs to play them."""

    env_name: str
    env_options: dict[str, Any]
    options: str
    table: tuple[str, ...]  # agent names, one per side
    specs: dict[str, str]  # name -> spec
    hashes: dict[str, str]  # name -> checkpoint hash (checkpoint agents only)
    first_deal: int
    deals: int

    @property
    def pairing(self) -> str:
        return _dumps(list(self.table))


def _final_info(env) -> dict[str, Any]:
    """The engine's public record at the end of the game just played."""
    return json.loads(_dumps(env.unwrapped.details()))


def play_batch(
    batch: Batch,
    on_game: Callable[[], None] | None = None,
    checkpoints: Mapping[str, ShippedCheckpoint] | None = None,
) -> list[dict[str, Any]]:
    """Play every deal of a batch in every seating; one stored row per game. A deal's
    seed fixes its outcome: agents are reseeded from it before each game. The env and
    agents are kept in this process between batches (``checkpoints``: weights shipped
    to a Ray worker, `parlour.training.distributed`)."""
    env = worker_env(batch.env_name, batch.env_options)
    teams = teams_of(env.unwrapped.game)
    k = len(teams)
    seats_count = sum(len(t) for t in teams)
    rows = []
    for deal in range(batch.first_deal, batch.first_deal + batch.deals):
        seed = deal_seed(deal)
        for seating in range(k):
            seats = [""] * seats_count
            for team, name in zip(
                teams, seating_sides(batch.table, seating), strict=True
            ):
                for s in team:
                    seats[s] = name
            players = [
                worker_agent(
                    batch.specs[n],
                    batch.env_name,
                    batch.env_options,
                    seed=s,
                    checkpoints=checkpoints,
                )
                for s, n in enumerate(seats)
            ]
            for s, player in enumerate(players):
                player.reset(seed=seed + 7919 * (s + 1))
            returns = play_game(env, players, seed=seed)
            info = _final_info(env)
            rows.append(
                {
                    "env": batch.env_name,
                    "options": batch.options,
                    "pairing": batch.pairing,
                    "deal": deal,
                    "seed": seed,
                    "seating": seating,
                    "seats": _dumps(seats),
                    "hashes": _dumps(
                        {n: batch.hashes[n] for n in set(seats) if n in batch.hashes}
                    ),
                    "teams": _dumps(teams),
                    "returns": _dumps([float(r) for r in returns]),
                    "scores": _dumps(info["scores"]) if "scores" in info else None,
                    "info": _dumps(info),
                    "version": __version__,
                    "played_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                }
            )
            if on_game is not None:
                on_game()
    return rows


def play_batch_task(
    batch: Batch, checkpoints: Mapping[str, ShippedCheckpoint] | None = None
) -> list[dict[str, Any]]:
    """A Ray task: `play_batch` with the shipped checkpoints."""
    return play_batch(batch, checkpoints=checkpoints)


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
        agent = agents_mod.make(spec, env_name, seed=0, env_options=env_options)
        canonical = agent.spec if isinstance(agent.spec, str) else spec
        digest = checkpoint_hash(spec, env_name, env_options)
        name = agent_name(canonical, digest)
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
    backend: str = "local",
    address: str | None = None,
    batch_deals: int = BATCH_DEALS,
    progress: bool = False,
    ray_init: Mapping[str, Any] | None = None,
) -> LeagueRun:
    """Play ``games`` more games at every table (rounded up to whole deals, one game per
    seating) and append them to the database ``db``.

    ``backend="ray"`` plays the batches as Ray tasks (`parlour.training.distributed`:
    a local Ray of its own, or the cluster at ``address``; ``ray_init`` adds
    `ray.init` keyword arguments; checkpoints travel as weights). Ctrl-C stops the
    league; every finished batch is kept and the run says it was interrupted.
    """
    if not isinstance(games, int) or games < 1:
        raise LeagueError(f"games must be a positive integer, got {games!r}")
    if not isinstance(batch_deals, int) or batch_deals < 1:
        raise LeagueError(
            f"batch_deals must be a positive integer, got {batch_deals!r}"
        )
    session = distributed.session_for(backend, address, ray_init)
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
                pairing = _dumps(list(table))
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
        from tqdm import tqdm

        bar = tqdm(total=run.planned, desc=f"league {env_name}", unit="game")

    def store(_: int, rows: list[dict[str, Any]]) -> None:
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


# --- ratings --------------------------------------------------------------------------
@dataclass
class Standing:
    """One agent's line on the leaderboard."""

    agent: str
    mu: float
    sigma: float
    games: int
    win_share: Interval
    mean_score: Interval
    spec: str = ""
    checkpoint: str | None = None

    @property
    def low(self) -> float:
        return self.mu - 1.959963984540054 * self.sigma

    @property
    def high(self) -> float:
        return self.mu + 1.959963984540054 * self.sigma

    def as_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "spec": self.spec,
            "checkpoint_sha256": self.checkpoint,
            "rating": {
                "mu": self.mu,
                "sigma": self.sigma,
                "low": self.low,
                "high": self.high,
            },
            "games": self.games,
            "win_share": self.win_share.as_dict(),
            "mean_score": self.mean_score.as_dict(),
        }


@dataclass
class Leaderboard:
    """The standings of one env and option set, best rating first."""

    env_name: str
    options: dict[str, Any]
    games: int
    standings: list[Standing] = field(default_factory=list)
    sides: int = 2

    def as_dict(self) -> dict[str, Any]:
        return {
            "env": self.env_name,
            "options": self.options,
            "games": self.games,
            "sides": self.sides,
            "model": "openskill PlackettLuce",
            "standings": [s.as_dict() for s in self.standings],
        }

    def _rows(self) -> list[list[str]]:
        return [
            [
                str(i),
                s.agent,
                f"{s.mu:.2f} ± {1.96 * s.sigma:.2f}",
                str(s.games),
                str(s.win_share),
                str(s.mean_score),
            ]
            for i, s in enumerate(self.standings, 1)
        ]

    _HEAD = [
        "#",
        "agent",
        "rating (μ ± 1.96σ)",
        "games",
        "win share [95% CI]",
        "mean score [95% CI]",
    ]

    def table(self) -> str:
        """The leaderboard as plain text."""
        rows = [self._HEAD, *self._rows()]
        widths = [max(len(r[i]) for r in rows) for i in range(len(self._HEAD))]
        lines = [self.title()]
        for r in rows:
            cells = (c.ljust(w) for c, w in zip(r, widths, strict=True))
            lines.append("  ".join(cells).rstrip())
        lines.append(
            f"(win share: share of the top score; an even share is "
            f"{1 / self.sides:.3f} with {self.sides} sides)"
        )
        return "\n".join(lines)

    def markdown(self) -> str:
        """The leaderboard as a Markdown table."""
        lines = [
            "| " + " | ".join(self._HEAD) + " |",
            "|" + "|".join("---" for _ in self._HEAD) + "|",
        ]
        for r in self._rows():
            r[1] = f"`{r[1]}`"
            lines.append("| " + " | ".join(r) + " |")
        return "\n".join(lines)

    def title(self) -> str:
        opts = ", ".join(f"{k}={v}" for k, v in self.options.items())
        return f"{self.env_name} ({opts}): {self.games} games"

    def plot(self, path: str | Path) -> Path:
        """Draw the ratings with their 95% bars; returns the path written."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        names = [s.agent for s in self.standings][::-1]
        mus = [s.mu for s in self.standings][::-1]
        errs = [1.96 * s.sigma for s in self.standings][::-1]
        fig, ax = plt.subplots(figsize=(7, 0.45 * len(names) + 1.4))
        ax.errorbar(mus, range(len(names)), xerr=errs, fmt="o", capsize=4)
        ax.set_yticks(range(len(names)), names)
        ax.set_xlabel("openskill Plackett–Luce rating μ (bars: ±1.96σ)")
        ax.set_title(textwrap.fill(self.title(), 70), fontsize=9)
        ax.grid(axis="x", alpha=0.3)
        fig.tight_layout()
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=120)
        plt.close(fig)
        return path


def option_sets(conn: sqlite3.Connection, env_name: str) -> list[str]:
    """The option sets (stored keys) that have games for an env, oldest first."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT options FROM games WHERE env=? GROUP BY options ORDER BY MIN(id)",
            (env_name,),
        )
    ]


def stored_games(
    conn: sqlite3.Connection, env_name: str, opts: str
) -> Iterator[tuple[list[str], list[list[int]], list[float], dict[str, str]]]:
    """Each stored game of an env and option set, in the order stored: agent per seat,
    the sides' seats, the returns and the checkpoint hashes."""
    cursor = conn.execute(
        "SELECT seats, teams, returns, hashes FROM games WHERE env=? AND options=? "
        "ORDER BY id",
        (env_name, opts),
    )
    for seats, teams, returns, hashes in cursor:
        yield (
            json.loads(seats),
            json.loads(teams),
            json.loads(returns),
            json.loads(hashes),
        )


def fit(
    games: Iterable[tuple[list[str], list[list[int]], list[float]]],
) -> dict[str, dict[str, Any]]:
    """Ratings and per-agent results from games (agent per seat, sides' seats, returns
    per seat), updated game by game with openskill's Plackett–Luce model.

    Each side is a team of the distinct agents in its seats (partners may be different
    agents); sides rank by their mean return, ties sharing a rank. An agent holding
    several sides of one game (fewer agents than sides) gets the sum of its sides'
    rating changes. Returns ``{agent: {"mu", "sigma", "wins", "scores"}}``.
    """
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings: dict[str, Any] = {}
    wins: dict[str, list[float]] = {}
    scores: dict[str, list[float]] = {}
    for seats, teams, returns in games:
        side_score = [float(np.mean([returns[s] for s in team])) for team in teams]
        members = [list(dict.fromkeys(seats[s] for s in team)) for team in teams]
        for i, team in enumerate(teams):
            share = win_share(returns, teams, [s in team for s in range(len(seats))])
            for name in members[i]:
                wins.setdefault(name, []).append(share)
                scores.setdefault(name, []).append(side_score[i])
        for team in members:
            for name in team:
                if name not in ratings:
                    ratings[name] = model.rating(name=name)
        order = sorted(set(side_score), reverse=True)
        ranks = [order.index(v) for v in side_score]
        # copies, so one agent on two sides is rated from the same prior on both
        entry = [
            [
                model.create_rating([ratings[n].mu, ratings[n].sigma], name=n)
                for n in team
            ]
            for team in members
        ]
        updated = model.rate(entry, ranks=ranks)
        delta: dict[str, float] = {}
        sigma: dict[str, float] = {}
        for team in updated:
            for r in team:
                delta[r.name] = delta.get(r.name, 0.0) + r.mu - ratings[r.name].mu
                sigma[r.name] = min(sigma.get(r.name, math.inf), r.sigma)
        for name, d in delta.items():
            ratings[name].mu += d
            ratings[name].sigma = sigma[name]
    return {
        name: {
            "mu": float(r.mu),
            "sigma": float(r.sigma),
            "wins": wins[name],
            "scores": scores[name],
        }
        for name, r in ratings.items()
    }


def leaderboard(conn: sqlite3.Connection, env_name: str, opts: str) -> Leaderboard:
    """The leaderboard of an env and option set, fitted from every stored game."""
    games: list[tuple[list[str], list[list[int]], list[float]]] = []
    digests: dict[str, str] = {}
    sides = 2
    for seats, teams, returns, hashes in stored_games(conn, env_name, opts):
        games.append((seats, teams, returns))
        digests.update(hashes)
        sides = len(teams)
    fitted = fit(games)
    board = Leaderboard(env_name, json.loads(opts), len(games), sides=sides)
    for name, f in fitted.items():
        board.standings.append(
            Standing(
                name,
                f["mu"],
                f["sigma"],
                len(f["wins"]),
                wilson(sum(f["wins"]), len(f["wins"])),
                mean_interval(f["scores"]),
                spec=name.split("#")[0] if name in digests else name,
                checkpoint=digests.get(name),
            )
        )
    board.standings.sort(key=lambda s: (-s.mu, s.agent))
    return board


def leaderboards(
    db: str | Path, env_name: str, env_options: Mapping[str, Any] | None = None
) -> list[Leaderboard]:
    """The leaderboards of an env in a database: for the given options, or (``None``)
    one per option set stored."""
    envs.module(env_name)  # an unknown env name is an error, not an empty table
    conn = connect(db, create=False)
    try:
        if env_options is not None:
            wanted = [options_key(env_name, env_options)]
        else:
            wanted = option_sets(conn, env_name)
        boards = [leaderboard(conn, env_name, o) for o in wanted]
    finally:
        conn.close()
    boards = [b for b in boards if b.games]
    if not boards:
        raise LeagueError(
            f"no {env_name} games in {db}"
            + (" with those options" if env_options is not None else "")
        )
    return boards


__all__ = [
    "APPLICATION_ID",
    "DEFAULT_DB",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "Batch",
    "Leaderboard",
    "LeagueError",
    "LeagueRun",
    "Standing",
    "checkpoint_hash",
    "claim_deals",
    "connect",
    "deal_seed",
    "fit",
    "heuristic_switches",
    "insert_games",
    "leaderboard",
    "leaderboards",
    "options_key",
    "play_batch",
    "prepare",
    "run_league",
    "schema_version",
    "tables_for",
]
