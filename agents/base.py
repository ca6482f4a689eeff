"""The agent protocol shared by the arena, the play CLI and training.

An agent is called once per decision with a `Turn`: the player's observation and action
mask, and, for rule-based bots that read the engine as RLCard's rule models do, the
engine and its state. Bots must only use what the seat may know (its own hand plus
public information); the tests check that by changing hidden cards and asserting the
bot's choice does not move.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..envs.core.engine import Game


@dataclass
class Turn:
    """One decision: who acts, what they observe, and the engine view for rule-based
    bots."""

    game: Game
    state: Any
    seat: int
    observation: np.ndarray
    mask: np.ndarray

    def legal_actions(self) -> list[int]:
        """The legal action ids (from the mask, so they agree with what the env
        offers)."""
        return np.flatnonzero(self.mask).tolist()


class Agent(ABC):
    """Maps a `Turn` to a legal action id."""

    #: the spec string that recreates this agent (``"random"``,
    #: ``"heuristic:-win_cheaply"``)
    spec: str = "agent"

    def reset(self, seed: int | None = None) -> None:  # noqa: B027 optional hook
        """Called before each game; agents with randomness reseed here."""

    @abstractmethod
    def act(self, turn: Turn) -> int:
        """The action to take."""

    def search_settings(self) -> dict[str, Any]:
        """The numbers that set this agent's search at play time (samples, limits),
        none for an agent that does not search. The league hashes them into the name
        of ``expert`` (`parlour.league.identity`), so a change of budget is a new
        player."""
        return {}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec}>"


class SeededAgent(Agent):
    """An agent whose choices draw on its own generator ``rng``, seeded by ``seed``
    and reseeded by `reset` when given one."""

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)


class RandomAgent(SeededAgent):
    """Uniformly random legal moves."""

    spec = "random"

    def act(self, turn: Turn) -> int:
        legal = turn.legal_actions()
        return legal[int(self.rng.integers(len(legal)))]


class SwitchedBot(SeededAgent):
    """Base of the rule-based bots whose ideas (the seeds' tips) are on/off switches.

    A bot names its switches in ``SWITCHES``; each is a keyword option, True unless
    given. The constructor checks them, keeps them in ``options`` and as attributes,
    names the bot by its spec string (``heuristic:-name,…`` for each switch that is
    off) and seeds the tie-break generator ``rng``, which `reset` reseeds.
    """

    spec = "heuristic"
    #: the game's name in error messages
    game_title = ""
    #: the switches (the seed's tips) in order
    SWITCHES: tuple[str, ...] = ()

    def __init__(self, seed: int | None = None, **switches: Any):
        unknown = sorted(set(switches) - set(self.SWITCHES))
        if unknown:
            raise ValueError(
                f"unknown {self.game_title} heuristic option(s) {unknown}; "
                f"valid options: {', '.join(self.SWITCHES)}"
            )
        switches = {name: switches.get(name, True) for name in self.SWITCHES}
        for name, value in switches.items():
            if not isinstance(value, bool | np.bool_):
                raise ValueError(f"option {name} must be True or False, got {value!r}")
        self.options = {name: bool(v) for name, v in switches.items()}
        for name, on in self.options.items():
            setattr(self, name, on)
        off = [name for name, on in self.options.items() if not on]
        self.spec = "heuristic" + (":" + ",".join("-" + n for n in off) if off else "")
        super().__init__(seed)

    def act(self, turn: Turn) -> int:
        """The only legal action, else the bot's `choose`."""
        legal = turn.legal_actions()
        if len(legal) == 1:
            return legal[0]
        return self.choose(turn, legal)

    @abstractmethod
    def choose(self, turn: Turn, legal: list[int]) -> int:
        """The action among ``legal`` (two or more, sorted) to take at ``turn``."""


class EndgameAgent(Agent):
    """``endgame:SPEC``: the agent ``SPEC``, corrected by the game's exact solver where
    the solver can value the position (`parlour.agents.EXACT_MOVES`; German Whist:
    stage 2). There it keeps ``SPEC``'s move when that move is optimal and otherwise
    plays the first optimal one. Against the plain agent it measures what the agent's
    mistakes in those positions cost (`docs/results.md`)."""

    def __init__(self, base: Agent, optimal_moves: Callable[[Game, Any], Any]):
        self.base = base
        self.optimal_moves = optimal_moves
        self.spec = f"endgame:{base.spec}"

    def reset(self, seed: int | None = None) -> None:
        self.base.reset(seed)

    def search_settings(self) -> dict[str, Any]:
        """The base agent's (the correction is exact and has none)."""
        return self.base.search_settings()

    def act(self, turn: Turn) -> int:
        action = self.base.act(turn)
        best = self.optimal_moves(turn.game, turn.state)
        if best is None or action in best:
            return action
        return best[0]
