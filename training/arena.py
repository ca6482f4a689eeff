"""The arena: agents play many games of an env and the results come with confidence
intervals.

Two agent specs ``A B`` mean a candidate ``A`` against a field of ``B``: ``A`` takes one
seat (one team in partnership games) and ``B`` every other. Without ``--duplicate`` the
candidate's seat rotates from game to game; with it every deal (the env seed) is
replayed once per seating, so both agents hold the same cards and the paired per-deal
difference removes the luck of the deal.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import agents as agents_mod
from .. import envs, versions
from ..agents.base import Agent, Turn
from . import distributed
from .stats import Interval, mean_interval, wilson


def play_game(
    env,
    players: Sequence[Agent],
    seed: int | None = None,
    options: Mapping | None = None,
    on_move: Callable[[int, int], None] | None = None,
) -> list[float]:
    """Play one episode; ``players[i]`` plays seat ``i``. Returns each seat's total
    reward. ``on_move(seat, action)``, if given, sees every decision before it is
    played (the raw env's state is still the one the seat decided in)."""
    env.reset(seed=seed, options=options)
    raw = env.unwrapped
    totals = [0.0] * len(players)
    for name in env.agent_iter():
        seat = raw.agent_name_mapping[name]
        obs, reward, terminated, truncated, _ = env.last()
        totals[seat] += reward
        if terminated or truncated:
            env.step(None)
            continue
        turn = Turn(
            raw.game, raw.game_state, seat, obs["observation"], obs["action_mask"]
        )
        action = players[seat].act(turn)
        if on_move is not None:
            on_move(seat, action)
        env.step(action)
    return totals


def teams_of(game) -> list[list[int]]:
    """The seats that share a result: partnerships where the game has them, else one per
    seat."""
    teams = getattr(game, "teams", None)
    if callable(teams):
        return [list(t) for t in teams()]
    return [[s] for s in range(game.num_players)]


@dataclass
class ArenaResult:
    """Per-game candidate results plus the summary the CLI prints."""

    env_name: str
    env_options: dict[str, Any]
    specs: list[str]
    duplicate: bool
    seed: int
    games: int = 0
    # candidate's return per game
    candidate_scores: list[float] = field(default_factory=list)
    field_scores: list[float] = field(default_factory=list)  # mean return of the others
    # share of the win, see win_share
    candidate_wins: list[float] = field(default_factory=list)
    deal_index: list[int] = field(default_factory=list)
    num_teams: int = 2
    planned: int = 0  # games the run meant to play
    interrupted: bool = False  # stopped by Ctrl-C: the finished games only

    def keep_finished(self) -> None:
        """After an interruption: keep the games whose every list entry was stored,
        and with ``duplicate`` whole deals only (every seating of a deal, so the
        comparison stays paired)."""
        lists = (
            self.deal_index,
            self.candidate_scores,
            self.field_scores,
            self.candidate_wins,
        )
        n = min(len(x) for x in lists)
        if self.duplicate and n:
            # games arrive in deal order, so only the last deal can be partly played
            last = self.deal_index[n - 1]
            played = self.deal_index[:n].count(last)
            if played < self.num_teams:
                n -= played
        for x in lists:
            del x[n:]
        self.games = n
        self.interrupted = True

    def win_rate(self) -> Interval:
        return wilson(sum(self.candidate_wins), len(self.candidate_wins))

    def mean_score(self) -> Interval:
        return mean_interval(self.candidate_scores)

    def field_mean_score(self) -> Interval:
        return mean_interval(self.field_scores)

    def paired_difference(self) -> Interval:
        """Per deal: the candidate's mean margin over the field across all seatings."""
        per_deal: dict[int, list[float]] = {}
        for d, c, f in zip(
            self.deal_index, self.candidate_scores, self.field_scores, strict=True
        ):
            per_deal.setdefault(d, []).append(c - f)
        return mean_interval([float(np.mean(v)) for v in per_deal.values()])

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "env": self.env_name,
            "options": self.env_options,
            "candidate": self.specs[0],
            "field": self.specs[1],
            "games": self.games,
            "duplicate": self.duplicate,
            "seed": self.seed,
            "sides": self.num_teams,
            "win_rate": self.win_rate().as_dict(),
            "mean_score": self.mean_score().as_dict(),
            "field_mean_score": self.field_mean_score().as_dict(),
        }
        if self.duplicate:
            out["paired_margin"] = self.paired_difference().as_dict()
        if self.interrupted:
            out["interrupted"] = True
            out["planned"] = self.planned
        return out

    def table(self) -> str:
        a, b = self.specs
        opts = ", ".join(f"{k}={v}" for k, v in self.env_options.items())
        head = f"{self.env_name}" + (f" ({opts})" if opts else "")
        mode = "duplicate deals, seats rotated" if self.duplicate else "seats rotating"
        win = self.win_rate()
        w = max(12, len(a), len(b) + 8)
        played = f"{self.games} games"
        if self.interrupted:
            played = f"{self.games} of {self.planned} games (interrupted)"
        lines = [
            f"{head}: {a} vs {b} — {played}, {mode}, seed {self.seed}",
            f"{'agent':<{w}}  {'win rate [95% Wilson CI]':<26}  "
            f"{'mean score [95% CI]'}",
            f"{a:<{w}}  {str(win):<26}  {self.mean_score()}",
            f"{b + ' (field)':<{w}}  {'':<26}  {self.field_mean_score()}",
        ]
        if self.num_teams > 2:
            lines.append(
                f"(win rate = share of the top score; an even share is "
                f"{1 / self.num_teams:.3f} with {self.num_teams} sides)"
            )
        if self.duplicate:
            lines.append(
                f"paired margin {a} − {b} per deal [95% CI]: {self.paired_difference()}"
            )
        return "\n".join(lines)


class ArenaInterrupted(KeyboardInterrupt):
    """Ctrl-C during `run_arena`. ``result`` holds the games finished before it (whole
    deals with ``duplicate``, `ArenaResult.keep_finished`); a caller that does not
    look for it sees the KeyboardInterrupt it always saw."""

    def __init__(self, result: ArenaResult):
        super().__init__()
        self.result = result


def win_share(
    scores: Sequence[float], teams: list[list[int]], mine: Sequence[bool]
) -> float:
    """The candidate's share of the win: 1 if its team alone has the top score, 1/k if k
    teams share it, else 0. A fair share is 1/(number of teams), for any number of
    players."""
    team_scores = [float(np.mean([scores[s] for s in team])) for team in teams]
    top = max(team_scores)
    leaders = [i for i, v in enumerate(team_scores) if v == top]
    own = next(i for i, team in enumerate(teams) if mine[team[0]])
    return 1.0 / len(leaders) if own in leaders else 0.0


def seatings(num_players: int, teams: list[list[int]]) -> list[list[bool]]:
    """For each seating, which seats the candidate controls (one team after another)."""
    return [[s in team for s in range(num_players)] for team in teams]


def run_arena(
    env_name: str,
    specs: Sequence[str | Agent],
    games: int = 100,
    duplicate: bool = False,
    seed: int = 0,
    env_options: Mapping[str, Any] | None = None,
    progress: bool = False,
    on_game: Callable[[int], None] | None = None,
    executor: str = "local",
    address: str | None = None,
    ray_init: Mapping[str, Any] | None = None,
    *,
    backend: str | None = None,
    held_out: bool = False,
) -> ArenaResult:
    """Play ``games`` games of candidate ``specs[0]`` against field ``specs[1]``.

    A spec is a spec string or an `Agent` object (a field agent object then plays every
    field seat). With ``duplicate`` the number of games is rounded up to whole deals
    (one game per seating).

    ``executor="ray"`` plays chunks of deals as Ray tasks (`parlour.training.
    distributed`: a local Ray of its own, or the cluster at ``address``; ``ray_init``
    adds `ray.init` keyword arguments); it takes spec strings only, and the result is
    the local one, game for game. ``on_game(played)`` is called after each game, just
    before the result counts it (over Ray: for each game of a chunk as the chunk comes
    back, in deal order).
    ``backend=`` is the old name of ``executor=`` (deprecated). ``held_out=True``
    seeds the deals at or above `training.selfplay.TRAIN_SEED_LIMIT`, where self-play
    never draws: deals no training run played. Ctrl-C while the games are played
    raises `ArenaInterrupted` (a KeyboardInterrupt) holding the games finished.
    """
    executor = distributed.executor_of(executor, backend)
    session = distributed.session_for(executor, address, ray_init)
    objects = [s for s in specs if not isinstance(s, str)]
    if session is not None and objects:
        raise ValueError(
            "--executor ray sends agent specs to its workers, not Agent objects "
            f"(got {objects[0]!r}); give a spec string"
        )
    if len(specs) != 2:
        raise ValueError(
            f"give two agent specs (candidate and field), got {len(specs)}"
        )
    if not isinstance(games, int) or games < 1:
        raise ValueError(f"games must be a positive integer, got {games!r}")
    env_options = dict(env_options or {})
    env = envs.make(env_name, **env_options)
    game = env.unwrapped.game
    teams = teams_of(game)
    rotations = seatings(game.num_players, teams)
    context = {"env_options": env_options}

    def build(spec: str | Agent, agent_seed: int) -> Agent:
        if isinstance(spec, Agent):
            return spec
        return agents_mod.make(spec, env_name, seed=agent_seed, **context)

    # built here with either executor: a bad spec or checkpoint fails before any game
    candidate = build(specs[0], seed)
    field_agents = [build(specs[1], seed + 1 + s) for s in range(game.num_players)]
    specs = [s if isinstance(s, str) else s.spec for s in specs]
    deals = -(-games // len(rotations)) if duplicate else games
    deal_seeds = (
        np.random.SeedSequence(seed).generate_state(deals, dtype=np.uint32).tolist()
    )
    if held_out:
        # the top bit set: 2**31 and above, self-play's TRAIN_SEED_LIMIT
        deal_seeds = [s | 2**31 for s in deal_seeds]
    per_deal = len(rotations) if duplicate else 1
    result = ArenaResult(
        env_name,
        env_options,
        list(specs),
        duplicate,
        seed,
        num_teams=len(teams),
        planned=deals * per_deal,
    )
    if session is not None:
        session.begin(specs, announce=progress)  # before the bar: a refusal is alone
    bar = None
    if progress:
        from ..progress import progress_bar

        bar = progress_bar(
            total=deals * per_deal, desc=f"{specs[0]} vs {specs[1]}", unit="game"
        )

    def tick(n: int) -> None:
        if bar is not None:
            bar.update(n)

    def keep(rows: Sequence[tuple[int, float, float, float]]) -> None:
        for d, c, f, w in rows:
            # on_game first: what it keeps of the game (a record) is never behind the
            # result when Ctrl-C comes between the two
            if on_game is not None:
                on_game(len(result.deal_index) + 1)
            result.deal_index.append(d)
            result.candidate_scores.append(c)
            result.field_scores.append(f)
            result.candidate_wins.append(w)
            result.games = len(result.deal_index)

    try:
        if executor == "local":

            def one_game(row: tuple[int, float, float, float]) -> None:
                keep([row])
                tick(1)

            deals_list = list(enumerate(deal_seeds))
            play_deals(env, candidate, field_agents, deals_list, duplicate, one_game)
        else:
            plan = ArenaChunk(
                env_name,
                env_options,
                (specs[0], specs[1]),
                seed,
                duplicate,
                tuple(enumerate(deal_seeds)),
            )
            _run_ray(session, plan, keep, tick)
    except KeyboardInterrupt:
        result.keep_finished()
        raise ArenaInterrupted(result) from None
    finally:
        if bar is not None:
            bar.close()
        env.close()
        if session is not None:
            session.close()
    return result


def play_deals(
    env,
    candidate: Agent,
    field_agents: Sequence[Agent],
    deals: Sequence[tuple[int, int]],
    duplicate: bool,
    on_game: Callable[[tuple[int, float, float, float]], None] | None = None,
) -> list[tuple[int, float, float, float]]:
    """Play deals ``(index, env seed)``: every seating with ``duplicate``, else deal
    ``d``'s seating in rotation. One row per game: the deal index, the candidate's
    return, the field's mean return and the candidate's `win_share`; ``on_game(row)``
    sees each as its game ends. Agents are reseeded from the deal seed before each
    game, so a deal's games do not depend on what the agents played before."""
    game = env.unwrapped.game
    teams = teams_of(game)
    rotations = seatings(game.num_players, teams)
    rows = []
    for d, deal_seed in deals:
        these = rotations if duplicate else [rotations[d % len(rotations)]]
        for mine in these:
            players = [candidate if m else field_agents[s] for s, m in enumerate(mine)]
            candidate.reset(seed=deal_seed)
            for s, agent in enumerate(field_agents):
                agent.reset(seed=deal_seed + 7919 * (s + 1))
            scores = play_game(env, players, seed=deal_seed)
            own = [scores[s] for s in range(len(mine)) if mine[s]]
            others = [scores[s] for s in range(len(mine)) if not mine[s]]
            row = (
                d,
                float(np.mean(own)),
                float(np.mean(others)),
                win_share(scores, teams, mine),
            )
            rows.append(row)
            if on_game is not None:
                on_game(row)
    return rows


@dataclass(frozen=True)
class ArenaChunk:
    """Some deals of an arena run: what a Ray worker needs to play them (plain data,
    `parlour.training.distributed.check_wire`)."""

    env_name: str
    env_options: dict[str, Any]
    specs: tuple[str, str]
    seed: int
    duplicate: bool
    deals: tuple[tuple[int, int], ...]  # (deal index, env seed)


def play_chunk(
    chunk: ArenaChunk, checkpoints: Mapping[str, Any] | None = None
) -> list[tuple[int, float, float, float]]:
    """A Ray task: play a chunk's deals (`play_deals`) with agents built as
    `run_arena` builds them, kept in the worker between chunks."""
    from .distributed import worker_agent, worker_env

    env = worker_env(chunk.env_name, chunk.env_options)
    a, b = chunk.specs
    opts = chunk.env_options
    candidate = worker_agent(
        a, chunk.env_name, opts, chunk.seed, "candidate", checkpoints
    )
    field_agents = [
        worker_agent(b, chunk.env_name, opts, chunk.seed + 1 + s, "field", checkpoints)
        for s in range(env.unwrapped.game.num_players)
    ]
    return play_deals(env, candidate, field_agents, chunk.deals, chunk.duplicate)


def _run_ray(
    session: distributed.RaySession,
    plan: ArenaChunk,
    keep: Callable[[Sequence[tuple[int, float, float, float]]], None],
    tick: Callable[[int], None],
) -> None:
    """Play ``plan``'s deals in chunks over Ray. ``tick(games)`` as each chunk comes
    back; ``keep`` gets the chunks' rows in deal order (a chunk that ends early waits
    for the ones before it), so the result lists are the local run's."""
    size = distributed.chunk_size(len(plan.deals), session.workers)
    chunks = [
        dataclasses.replace(plan, deals=plan.deals[i : i + size])
        for i in range(0, len(plan.deals), size)
    ]
    waiting: dict[int, list] = {}
    next_chunk = 0

    def arrived(index: int, rows: list) -> None:
        nonlocal next_chunk
        tick(len(rows))
        waiting[index] = rows
        while next_chunk in waiting:
            keep(waiting.pop(next_chunk))
            next_chunk += 1

    session.spread(play_chunk, chunks, arrived)


def save_json(result: ArenaResult, path: str | Path) -> None:
    """Write the summary and every game's result as JSON."""
    data = {**versions(result.env_name), **result.summary()}
    data["per_game"] = [
        {"deal": d, "candidate": c, "field": f, "win": w}
        for d, c, f, w in zip(
            result.deal_index,
            result.candidate_scores,
            result.field_scores,
            result.candidate_wins,
            strict=True,
        )
    ]
    # through a temporary file and a rename: a killed run leaves no half file
    from .checkpoint import write_text_atomic

    write_text_atomic(Path(path), json.dumps(data, indent=2))
