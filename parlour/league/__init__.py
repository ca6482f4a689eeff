"""The league: every agent against every other on duplicate deals, each game kept in a
SQLite database, and one rating per agent fitted from all of them.

Its parts: `store` (the database: schema, migrations, reading and writing games),
`identity` (an agent's name in the league: spec plus weights hash), `schedule` (tables,
seatings, deal seeds, the batches a worker plays), `run` (`run_league`), `ratings`
(openskill's Plackett-Luce fit) and `board` (the leaderboard as text, Markdown, JSON or
a plot). ``parlour league`` is the command; docs/leaderboard.md a board it made.
"""

from __future__ import annotations

from .board import Leaderboard, Standing, leaderboard, leaderboards
from .identity import agent_name, checkpoint_hash, identify
from .ratings import fit
from .run import LeagueRun, prepare, run_league
from .schedule import (
    BATCH_DEALS,
    Batch,
    canonical_table,
    deal_seed,
    play_batch,
    play_batch_task,
    seating_sides,
    tables_for,
)
from .store import (
    APPLICATION_ID,
    BUSY_TIMEOUT,
    DEFAULT_DB,
    MIGRATIONS,
    SCHEMA_VERSION,
    LeagueError,
    claim_deals,
    connect,
    count_games,
    insert_games,
    option_sets,
    options_key,
    schema_version,
    stored_games,
)

__all__ = [
    "APPLICATION_ID",
    "BATCH_DEALS",
    "BUSY_TIMEOUT",
    "DEFAULT_DB",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "Batch",
    "Leaderboard",
    "LeagueError",
    "LeagueRun",
    "Standing",
    "agent_name",
    "canonical_table",
    "checkpoint_hash",
    "claim_deals",
    "connect",
    "count_games",
    "deal_seed",
    "fit",
    "identify",
    "insert_games",
    "leaderboard",
    "leaderboards",
    "option_sets",
    "options_key",
    "play_batch",
    "play_batch_task",
    "prepare",
    "run_league",
    "schema_version",
    "seating_sides",
    "stored_games",
    "tables_for",
]
