"""Text agents: the prompt, an `Agent` around any ``callable(prompt) -> str``, games
recorded to JSONL and their replay.

A `TextAgent` plays wherever an agent plays (``parlour arena``, the league, the tips
harness, `play_game` here): at each decision it builds the seat's prompt (rules summary,
what the seat can see, the legal moves by name), asks the callable, reads the answer
with `parse_move` and, when the answer is refused, asks again with the refusal appended,
up to ``retries`` times. Then the fallback applies: ``"random"`` plays a uniformly
random legal move (seeded), ``"loss"`` forfeits the game (`Forfeit`; `forfeit_scores`
says what a forfeit scores in each game). A forfeit ends the game only under a driver
that knows it (`play_game`, `parlour.text.TextEnv`); the arena has none, so its text
agents use the random fallback.

`play_game` plays one game with any agents and returns its record: the env, options
and seed, every move of every seat by name, each text seat's prompts and answers, and
the final scores. `replay` plays a record again from its seed and its text answers
(re-reading every answer) and checks it ends with the same scores.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import envs
from ..agents.base import Agent, Turn
from ..envs.core.engine import TERMINAL
from .parse import Parsed, describe, legal_list, parse_move
from .rules import record_hook, summary
from .views import view

FALLBACKS = ("random", "loss")

HOW_TO_ANSWER = (
    'Answer with exactly one legal move, by its name (for example "{example}").{other}'
    ' If you write anything else, end with "MOVE: <move>".'
)
#: move kind -> an example of another spelling the parser reads
_SPELLINGS = {
    "card": '"queen of spades", "Q♠"',
    "bid": '"bid 20"',
    "rob": '"rob 7C"',
    "norob": '"no rob"',
    "trump": '"hearts"',
    "discard": '"discard 7C"',
    "zwang": '"QS with Zwang"',
    "top": '"QH at the top"',
    "roll": '"I roll"',
}


def engine_state(env: Any) -> Any:
    """The engine state of a Parlour env (wrapped or not): the one place text play
    reads it from the adapter."""
    return env.unwrapped.game_state


def prompt(game: Any, state: Any, seat: int, legal: Sequence[int]) -> str:
    """The plain-text prompt of ``seat`` at ``state``: the variant's rules summary,
    what the seat can see and its legal moves by name."""
    names = [game.action_name(a) for a in legal]
    kinds = {describe(n).kind for n in names}
    spellings = [v for k, v in _SPELLINGS.items() if k in kinds]
    other = (
        f" Other spellings are read too ({', '.join(spellings)})." if spellings else ""
    )
    return "\n\n".join(
        [
            "RULES\n" + summary(game),
            f"THE TABLE (what player_{seat} can see)\n" + view(game, state, seat),
            f"YOUR MOVE\nYou are player_{seat}. Legal moves: {legal_list(names)}\n"
            + HOW_TO_ANSWER.format(example=names[0], other=other),
        ]
    )


def retry_prompt(first: str, refusal: str, attempts_left: int) -> str:
    """The prompt asked again after a refused answer."""
    return (
        f"{first}\n\nYour last answer was refused: {refusal}\n"
        f"Try again ({attempts_left} attempt{'' if attempts_left == 1 else 's'} left)."
    )


class Forfeit(Exception):
    """A text seat ran out of retries with the ``"loss"`` fallback: it loses the game
    (`forfeit_scores`). Drivers that know forfeits (`play_game`, `TextEnv`) end the
    game; any other driver stops with this error."""

    def __init__(self, seat: int, reason: str):
        super().__init__(
            f"player_{seat} forfeits: no legal move after its retries ({reason}). "
            "Use fallback='random' to play on."
        )
        self.seat = seat
        self.reason = reason


def _teams(game: Any) -> list[list[int]]:
    teams = getattr(game, "teams", None)
    if callable(teams):
        return [list(t) for t in teams()]
    return [[s] for s in range(game.num_players)]


def decided_by_win(game: Any) -> bool:
    """Whether the game's episode pays a win or a loss rather than points (the
    ``decided_by`` hook of its record)."""
    decided = record_hook(game, "decided_by", "way a game is decided")(game)
    if decided not in ("win", "points"):
        raise ValueError(
            f"{game.name}: decided_by gave {decided!r}, expected 'win' or 'points'"
        )
    return decided == "win"


def forfeit_scores(game: Any, state: Any, seat: int) -> list[float]:
    """The final scores when ``seat`` forfeits at ``state`` ("a loss" for that seat).

    How the game is decided is its record's ``decided_by`` hook.

    - Games whose episode pays a win or a loss (German Whist; a Honeymoon Whist match;
      a Forty-Fives game to the target; Fünfzehn – tot): the forfeiting seat's side
      loses and the others win, with the env's own rewards: −1 to each loser; +1 to
      each winner where two sides play, +1/(n−1) to each other seat where everyone
      plays alone (0 with Fünfzehn – tot's ``zero_sum=False``).
    - Games scored in points (a Honeymoon deal, a Forty-Fives deal, Fünfzehnern,
      Herzeln): play stops; every other seat keeps its score so far and the forfeiting
      side is put last, at one point below the lowest score at the table.
    """
    n = game.num_players
    side = next(t for t in _teams(game) if seat in t)
    if decided_by_win(game):
        winners = [s for s in range(n) if s not in side]
        share = 1.0 if len(side) > 1 else 1.0 / len(winners)
        if not getattr(game, "zero_sum", True):
            share = 0.0
        return [-1.0 if s in side else share for s in range(n)]
    scores = [float(x) for x in game.returns(state)]
    last = min(scores) - 1.0
    return [last if s in side else scores[s] for s in range(n)]


class TextAgent(Agent):
    """An agent that plays by text: ``ask(prompt) -> answer``.

    ``retries`` refused answers are asked again (with the refusal), then ``fallback``
    applies (``"random"`` or ``"loss"``). Each decision's exchange (prompt, answers,
    refusals, the move, how it was decided) is kept in ``last_exchange``; with
    ``transcript`` set, each is also appended to that JSONL file with the game's seed.
    ``counts`` tallies the decisions by outcome (``parsed`` first time, ``retried``,
    ``fallback``) and the refusals by reason.
    """

    def __init__(
        self,
        ask: Callable[[str], str],
        retries: int = 2,
        fallback: str = "random",
        seed: int | None = None,
        transcript: str | Path | None = None,
        spec: str = "text",
    ):
        if not callable(ask):
            raise ValueError(f"ask must be a callable(prompt) -> str, got {ask!r}")
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ValueError(f"retries must be an integer >= 0, got {retries!r}")
        if fallback not in FALLBACKS:
            raise ValueError(
                f"fallback must be one of {list(FALLBACKS)}, got {fallback!r}"
            )
        self.ask = ask
        self.retries = retries
        self.fallback = fallback
        self.spec = spec
        self.rng = np.random.default_rng(seed)
        self.transcript = Path(transcript) if transcript is not None else None
        self.game_seed: int | None = seed
        self.games = 0
        self.last_exchange: dict[str, Any] | None = None
        self.counts: dict[str, int] = {
            k: 0
            for k in (
                "parsed",
                "retried",
                "fallback",
                "ambiguous",
                "illegal",
                "unreadable",
            )
        }

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
            if hasattr(self.ask, "reset"):
                self.ask.reset(seed)
        self.game_seed = seed
        self.games += 1

    def act(self, turn: Turn) -> int:
        legal = turn.legal_actions()
        game = turn.game
        first = prompt(game, turn.state, turn.seat, legal)
        asked = first
        answers: list[str | None] = []  # None: an answer that was not text
        refusals: list[str] = []
        action: int | None = None
        for attempt in range(self.retries + 1):
            answer = self.ask(asked)
            answers.append(answer if isinstance(answer, str) else None)
            parsed: Parsed = parse_move(answer, legal, game)
            if parsed.status == "ok":
                action = parsed.action
                break
            self.counts[parsed.status] += 1
            refusals.append(parsed.message)
            asked = retry_prompt(first, parsed.message, self.retries - attempt)
        if action is not None:
            outcome = "parsed" if len(answers) == 1 else "retried"
        else:
            outcome = "fallback"
        exchange = {
            "seat": turn.seat,
            "prompt": first,
            "answers": answers,
            "refusals": refusals,
        }
        if action is None and self.fallback == "loss":
            exchange.update(action=None, outcome="forfeit")
            self._log(exchange)
            raise Forfeit(turn.seat, refusals[-1])
        if action is None:
            action = legal[int(self.rng.integers(len(legal)))]
        self.counts[outcome] += 1
        exchange.update(action=game.action_name(action), outcome=outcome)
        self._log(exchange)
        return action

    def _log(self, exchange: dict[str, Any]) -> None:
        self.last_exchange = exchange
        if self.transcript is not None:
            line = {"game": self.games, "seed": self.game_seed, **exchange}
            with self.transcript.open("a", encoding="utf-8") as f:
                f.write(json.dumps(line, ensure_ascii=False) + "\n")


def play_game(
    env_name: str,
    players: Sequence[Agent],
    seed: int | None = None,
    env_options: Mapping[str, Any] | None = None,
    reset_options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Play one game, ``players[i]`` in seat ``i`` (text agents and bots alike), and
    return its record (JSON-ready): ``env``, ``options``, ``seed``,
    ``reset_options``, ``seats`` (agent specs), ``moves`` (every move by name; a text
    seat's move also holds its prompt, answers, refusals and outcome), ``forfeit``
    (the seat that forfeited, or None) and ``scores`` (each seat's final return)."""
    env_options = dict(env_options or {})
    env = envs.make(env_name, **env_options)
    if len(players) != env.unwrapped.game.num_players:
        raise ValueError(
            f"{env_name} with these options has {env.unwrapped.game.num_players} "
            f"seats, got {len(players)} players"
        )
    env.reset(seed=seed, options=dict(reset_options) if reset_options else None)
    raw = env.unwrapped
    game = raw.game
    moves: list[dict[str, Any]] = []
    forfeit = None
    scores: list[float] | None = None
    while True:
        state = engine_state(env)
        seat = game.current_player(state)
        if seat == TERMINAL:
            break
        obs = raw.observe(raw.possible_agents[seat])
        turn = Turn(game, state, seat, obs["observation"], obs["action_mask"])
        player = players[seat]
        try:
            action = player.act(turn)
        except Forfeit:
            moves.append(dict(player.last_exchange or {"seat": seat}))
            forfeit = seat
            scores = forfeit_scores(game, state, seat)
            break
        if isinstance(player, TextAgent):
            moves.append(dict(player.last_exchange or {}))
        else:
            moves.append({"seat": seat, "action": game.action_name(int(action))})
        env.step(int(action))
    if scores is None:
        scores = [float(x) for x in game.returns(engine_state(env))]
    env.close()
    return {
        "env": env_name,
        "options": env_options,
        "seed": seed,
        "reset_options": dict(reset_options) if reset_options else None,
        "seats": [getattr(p, "spec", type(p).__name__) for p in players],
        "moves": moves,
        "forfeit": forfeit,
        "scores": scores,
    }


def _note(log: dict[str, Any], agent: Agent, turn: Turn, action: int) -> None:
    """Add one move (with a text agent's exchange) to an arena game's log."""
    if isinstance(agent, TextAgent) and agent.last_exchange is not None:
        move = dict(agent.last_exchange)
    else:
        move = {"seat": turn.seat, "action": turn.game.action_name(int(action))}
    log["moves"].append(move)
    log["seats"][turn.seat] = agent.spec
    # the engine state is updated in place until the next reset: at the end of the
    # game it holds the final scores
    log["game"], log["state"] = turn.game, turn.state


class _Candidate(Agent):
    """The arena's candidate, unchanged, with its moves noted in ``log``; its reset
    carries the deal's seed."""

    def __init__(self, base: Agent, log: dict[str, Any]):
        self.base, self.log, self.spec = base, log, base.spec

    def reset(self, seed: int | None = None) -> None:
        self.log["seed"] = seed
        self.base.reset(seed)

    def act(self, turn: Turn) -> int:
        action = self.base.act(turn)
        _note(self.log, self.base, turn, action)
        return action


class _Field(Agent):
    """The arena's field as ``run_arena`` builds it from a spec (one agent per seat),
    handed to it as one object: ``run_arena`` resets a field object once per seat in
    seat order, so each reset goes to that seat's agent, and each turn to the agent of
    the seat to act. Moves are noted in ``log``."""

    def __init__(self, per_seat: list[Agent], log: dict[str, Any]):
        self.per_seat, self.log, self.spec = per_seat, log, per_seat[0].spec
        self._resets = 0

    def reset(self, seed: int | None = None) -> None:
        self.per_seat[self._resets % len(self.per_seat)].reset(seed)
        self._resets += 1

    def act(self, turn: Turn) -> int:
        agent = self.per_seat[turn.seat]
        action = agent.act(turn)
        _note(self.log, agent, turn, action)
        return action


def run_text_arena(
    env_name: str,
    specs: Sequence[str | Agent],
    records: str | Path,
    games: int = 100,
    duplicate: bool = False,
    seed: int = 0,
    env_options: Mapping[str, Any] | None = None,
    progress: bool = False,
) -> Any:
    """`parlour.training.arena.run_arena`, with every game recorded: each game's record
    (the `play_game` format: every seat's moves, the text seats' prompts and answers,
    the final scores) is appended to the JSONL file ``records`` as the game ends, so an
    interrupted run keeps the games it finished. Returns the `ArenaResult`."""
    from .. import agents as agents_mod
    from ..training.arena import run_arena

    if len(specs) != 2:
        raise ValueError(
            f"give two agent specs (candidate and field), got {len(specs)}"
        )
    env_options = dict(env_options or {})
    num_players = envs.make(env_name, **env_options).unwrapped.game.num_players
    log: dict[str, Any] = {}

    def new_game() -> None:
        log.update(moves=[], seats=["?"] * num_players, game=None, state=None)

    new_game()

    def build(spec: str | Agent, agent_seed: int) -> Agent:
        if isinstance(spec, Agent):
            return spec
        return agents_mod.make(spec, env_name, seed=agent_seed, env_options=env_options)

    # The same agents, seeds and resets as run_arena gives plain specs, so a recorded
    # run plays the games an unrecorded one plays.
    candidate = _Candidate(build(specs[0], seed), log)
    field = _Field([build(specs[1], seed + 1 + s) for s in range(num_players)], log)
    path = Path(records)

    def finished(_: int) -> None:
        game, state = log["game"], log["state"]
        record = {
            "env": env_name,
            "options": env_options,
            "seed": log["seed"],
            "reset_options": None,
            "seats": log["seats"],
            "moves": log["moves"],
            "forfeit": None,
            "scores": [float(x) for x in game.returns(state)],
        }
        save_records([record], path)
        new_game()

    return run_arena(
        env_name,
        [candidate, field],
        games=games,
        duplicate=duplicate,
        seed=seed,
        env_options=env_options,
        progress=progress,
        on_game=finished,
    )


def save_records(records: Iterable[Mapping[str, Any]], path: str | Path) -> int:
    """Append game records to a JSONL file, one game a line; returns how many."""
    count = 0
    with Path(path).open("a", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    return count


def load_records(path: str | Path) -> list[dict[str, Any]]:
    """The game records of a JSONL file; ValueError naming the line of a bad one."""
    out = []
    for i, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}:{i}: not a JSON line ({err.msg})") from None
        missing = {"env", "options", "seed", "moves", "scores"} - set(record)
        if missing:
            raise ValueError(
                f"{path}:{i}: not a game record, missing {sorted(missing)}"
            )
        out.append(record)
    return out


def replay(record: Mapping[str, Any], check_prompts: bool = True) -> list[float]:
    """Play a recorded game again and return its final scores.

    The deal comes from the record's seed; each text move is decided again by reading
    its recorded answers in order (a fallback move, which came from a random draw, is
    taken from the record). Raises ValueError at the first point where the replay
    departs from the record: another seat to act, a different prompt (with
    ``check_prompts``), an answer read as another move, or other final scores."""
    env = envs.make(record["env"], **record["options"])
    env.reset(seed=record["seed"], options=record.get("reset_options"))
    raw = env.unwrapped
    game = raw.game
    for i, move in enumerate(record["moves"]):
        state = engine_state(env)
        seat = game.current_player(state)
        where = f"move {i}"
        if seat != move["seat"]:
            raise ValueError(
                f"{where}: player_{seat} is to act, the record has "
                f"player_{move['seat']}"
            )
        legal = game.legal_actions(state)
        if "answers" in move:
            if check_prompts and prompt(game, state, seat, legal) != move["prompt"]:
                raise ValueError(f"{where}: the prompt differs from the recorded one")
            action = None
            for answer in move["answers"]:
                parsed = parse_move(answer, legal, game)
                if parsed.status == "ok":
                    action = parsed.action
                    break
            if move.get("outcome") == "forfeit":
                if action is not None:
                    raise ValueError(f"{where}: a recorded forfeit now reads a move")
                scores = forfeit_scores(game, state, seat)
                return _same_scores(scores, record["scores"])
            if action is None:
                if move.get("outcome") != "fallback":
                    raise ValueError(f"{where}: no answer reads as a legal move now")
                action = game.action_id(move["action"])
        else:
            action = game.action_id(move["action"])
        if game.action_name(action) != move["action"]:
            raise ValueError(
                f"{where}: read {game.action_name(action)}, the record has "
                f"{move['action']}"
            )
        if action not in legal:
            raise ValueError(f"{where}: {move['action']} is not legal in the replay")
        env.step(action)
    if game.current_player(engine_state(env)) != TERMINAL:
        raise ValueError("the record ends before the game does")
    scores = [float(x) for x in game.returns(engine_state(env))]
    return _same_scores(scores, record["scores"])


def _same_scores(scores: list[float], recorded: Sequence[float]) -> list[float]:
    if not np.allclose(scores, recorded):
        raise ValueError(
            f"replayed scores {scores} differ from the record's {recorded}"
        )
    return scores


__all__ = [
    "FALLBACKS",
    "Forfeit",
    "TextAgent",
    "decided_by_win",
    "engine_state",
    "forfeit_scores",
    "load_records",
    "play_game",
    "prompt",
    "replay",
    "retry_prompt",
    "run_text_arena",
    "save_records",
]
