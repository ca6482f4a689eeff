"""The leaderboard: each agent's rating (with its 95% interval), games, win share and
mean score (Wilson and t 95% CIs), fitted from a database's stored games, as a text
table, Markdown, JSON (`Leaderboard.as_dict`) or a plot.
"""

from __future__ import annotations

import json
import sqlite3
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import envs
from ..training.stats import Interval, mean_interval, wilson
from .ratings import fit
from .store import LeagueError, connect, option_sets, options_key, stored_games


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
