"""`TextEnv`: a Parlour env played by text, one answer at a time.

>>> from parlour.text import TextEnv
>>> env = TextEnv("german_whist_v0")
>>> prompt = env.reset(seed=1)        # the prompt of the seat to act
>>> result = env.step("I play the queen of spades")
>>> result.status, result.message     # "ok", or why the answer was refused

Every seat is played by text: ``env.seat`` is the seat to answer and ``env.prompt`` its
prompt (with the last refusal appended after a refused answer). A refused answer costs
one of the seat's ``retries`` for this move; one more refusal applies the ``fallback``:
``"random"`` plays a random legal move (seeded by ``reset``), ``"loss"`` ends the game
as that seat's forfeit (`parlour.text.play.forfeit_scores`). ``env.record`` is the
game's record in the format of `parlour.text.play_game`, replayable with
`parlour.text.replay`; ``env.save(path)`` appends it to a JSONL file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import envs
from ..envs.core.engine import TERMINAL
from .parse import parse_move
from .play import FALLBACKS, engine_state, forfeit_scores, prompt, retry_prompt


@dataclass(frozen=True)
class TextStep:
    """What became of one answer: ``status`` is ``"ok"`` (played), ``"ambiguous"`` /
    ``"illegal"`` / ``"unreadable"`` (refused; answer again), ``"fallback"`` (refused
    for the last time; a random legal move was played) or ``"forfeit"`` (refused for
    the last time; the seat lost). ``move`` is the move played, if any."""

    status: str
    move: str | None
    message: str
    done: bool


class TextEnv:
    """The env ``env_name`` (with ``options``) played by text answers."""

    def __init__(
        self,
        env_name: str,
        retries: int = 2,
        fallback: str = "random",
        **options: Any,
    ):
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ValueError(f"retries must be an integer >= 0, got {retries!r}")
        if fallback not in FALLBACKS:
            raise ValueError(
                f"fallback must be one of {list(FALLBACKS)}, got {fallback!r}"
            )
        self.env_name = env_name
        self.options = dict(options)
        self.env = envs.make(env_name, **options)
        self.game = self.env.unwrapped.game
        self.retries = retries
        self.fallback = fallback
        self.record: dict[str, Any] | None = None
        self.rng = np.random.default_rng()

    # --- the game -------------------------------------------------------------------
    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> str:
        """Start a game; returns the first prompt."""
        self.env.reset(seed=seed, options=options)
        self.rng = np.random.default_rng(seed)
        self.record = {
            "env": self.env_name,
            "options": self.options,
            "seed": seed,
            "reset_options": options or None,
            "seats": ["text"] * self.game.num_players,
            "moves": [],
            "forfeit": None,
            "scores": None,
        }
        self._forfeit_scores: list[float] | None = None
        self._new_move()
        return self.prompt

    @property
    def done(self) -> bool:
        self._need_reset()
        return (
            self._forfeit_scores is not None
            or self.game.current_player(engine_state(self.env)) == TERMINAL
        )

    @property
    def seat(self) -> int:
        """The seat to answer (-2 once the game is over)."""
        self._need_reset()
        return TERMINAL if self.done else self.game.current_player(self._state)

    @property
    def agent_selection(self) -> str:
        """The agent name of the seat to answer (``"player_i"``); RuntimeError once
        the game is over."""
        if self.done:
            raise RuntimeError("the game is over; nobody is to answer")
        return self.env.unwrapped.possible_agents[self.seat]

    @property
    def legal_moves(self) -> list[str]:
        """The legal moves of the seat to answer, by name (empty once over)."""
        return [self.game.action_name(a) for a in self._legal]

    @property
    def prompt(self) -> str:
        """The current prompt of the seat to answer ("" once the game is over)."""
        self._need_reset()
        return self._prompt

    def scores(self) -> list[float]:
        """Each seat's score so far (the final scores once ``done``)."""
        self._need_reset()
        if self._forfeit_scores is not None:
            return list(self._forfeit_scores)
        return [float(x) for x in self.game.returns(self._state)]

    def step(self, answer: str) -> TextStep:
        """Read ``answer`` for the seat to answer and play it if it names exactly one
        legal move."""
        self._need_reset()
        if self.done:
            raise RuntimeError("the game is over; call reset() to start another")
        parsed = parse_move(answer, self._legal, self.game)
        # an answer that is not text is kept as null (it reads as nothing)
        self._move["answers"].append(answer if isinstance(answer, str) else None)
        if parsed.status == "ok":
            self._play(
                parsed.action,
                "parsed" if len(self._move["answers"]) == 1 else "retried",
            )
            return TextStep("ok", self._move_done["action"], parsed.message, self.done)
        self._move["refusals"].append(parsed.message)
        left = self.retries + 1 - len(self._move["answers"])
        if left > 0:
            self._prompt = retry_prompt(self._first, parsed.message, left)
            return TextStep(parsed.status, None, parsed.message, False)
        if self.fallback == "loss":
            seat = self._move["seat"]
            self._forfeit_scores = forfeit_scores(self.game, self._state, seat)
            self._move.update(action=None, outcome="forfeit")
            self.record["moves"].append(self._move)
            self.record["forfeit"] = seat
            self.record["scores"] = list(self._forfeit_scores)
            self._prompt, self._legal = "", []
            return TextStep(
                "forfeit", None, f"{parsed.message}; player_{seat} forfeits", True
            )
        action = self._legal[int(self.rng.integers(len(self._legal)))]
        self._play(action, "fallback")
        return TextStep(
            "fallback",
            self._move_done["action"],
            f"{parsed.message}; out of retries, played "
            f"{self._move_done['action']} at random",
            self.done,
        )

    def save(self, path: str | Path) -> None:
        """Append the game's record to a JSONL file."""
        from .play import save_records

        if self.record is None:
            raise RuntimeError("no game to save; call reset() and play first")
        save_records([self.record], path)

    # --- internals ------------------------------------------------------------------
    @property
    def _state(self) -> Any:
        return engine_state(self.env)

    def _need_reset(self) -> None:
        if self.record is None:
            raise RuntimeError("call reset() before playing")

    def _new_move(self) -> None:
        state = self._state
        seat = self.game.current_player(state)
        if seat == TERMINAL:
            self._legal, self._prompt, self._first = [], "", ""
            self.record["scores"] = self.scores()
            return
        self._legal = self.game.legal_actions(state)
        self._first = self._prompt = prompt(self.game, state, seat, self._legal)
        self._move: dict[str, Any] = {
            "seat": seat,
            "prompt": self._first,
            "answers": [],
            "refusals": [],
        }

    def _play(self, action: int, outcome: str) -> None:
        self._move.update(action=self.game.action_name(action), outcome=outcome)
        self.record["moves"].append(self._move)
        self._move_done = self._move
        self.env.step(int(action))
        self._new_move()


__all__ = ["TextEnv", "TextStep"]
