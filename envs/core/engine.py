"""The rules-engine protocol every Parlour game implements.

An engine is plain Python: a `Game` (rule variant fixed at construction, validated) and
a mutable state with a cheap ``clone()``. Chance is explicit, as in OpenSpiel: shuffles
and dice are chance nodes whose outcomes the caller picks (``chance_outcomes``) and
applies like any other action, so the engine owns no random number generator and a test
can force any deal by applying the outcomes it wants. Decision nodes have sorted legal
actions, and ``apply`` raises `IllegalActionError` with the reason instead of guessing
what was meant.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, Generic, TypeVar

import numpy as np

CHANCE = -1  # current_player() at a chance node
TERMINAL = -2  # current_player() once the game is over


class IllegalActionError(ValueError):
    """An action that the rules do not allow in this state (the message says why)."""


S = TypeVar("S")


class Game(ABC, Generic[S]):
    """A rule variant of one game. Subclasses validate their options in ``__init__``.

    Action ids are ``0 .. num_actions - 1`` for decisions; chance outcomes have their
    own id space per chance node (a card id for a deal, a face for a die).
    """

    name: str
    num_players: int
    num_actions: int
    observation_size: int
    #: keys ``reset(options=…)`` accepts beside ``"deal"``/``"deals"`` (e.g.
    #: ``"dealer"``)
    reset_option_keys: frozenset[str] = frozenset()

    # --- the game tree -------------------------------------------------------------
    @abstractmethod
    def new_state(self) -> S:
        """The root state (usually a chance node: the deal)."""

    @abstractmethod
    def current_player(self, state: S) -> int:
        """The seat to act, `CHANCE` or `TERMINAL`."""

    @abstractmethod
    def chance_outcomes(self, state: S) -> list[tuple[int, float]]:
        """``(outcome, probability)`` pairs at a chance node."""

    @abstractmethod
    def legal_actions(self, state: S) -> list[int]:
        """The acting seat's legal actions, sorted ascending."""

    @abstractmethod
    def apply(self, state: S, action: int) -> None:
        """Apply a decision or a chance outcome in place; raise `IllegalActionError` if
        illegal."""

    @abstractmethod
    def returns(self, state: S) -> list[float]:
        """Each seat's total reward so far (final once the state is terminal)."""

    def utility_bounds(self) -> tuple[float, float]:
        """The lowest and highest return any seat can finish with (the score range
        `returns` pays in; the OpenSpiel adapter declares it)."""
        raise ValueError(f"no utility bounds known for {self.name}")

    @abstractmethod
    def observe(self, state: S, player: int) -> np.ndarray:
        """Player ``player``'s observation: a float32 vector of ``observation_size``."""

    @abstractmethod
    def action_name(self, action: int) -> str:
        """The conventional name of an action id (a card name for a card play)."""

    @abstractmethod
    def action_id(self, name: str) -> int:
        """The action id of a name; ValueError naming the bad token."""

    @abstractmethod
    def render(self, state: S, viewer: int | None = None) -> str:
        """A text view of the table: everything when ``viewer`` is None, else what that
        seat sees."""

    # --- helpers with default implementations ----------------------------------------
    def is_terminal(self, state: S) -> bool:
        """True once the game is over."""
        return self.current_player(state) == TERMINAL

    def sample_chance(self, state: S, rng: np.random.Generator) -> list[int]:
        """Chance outcomes drawn with their probabilities: one, or several that follow
        each other (a game may draw a whole shuffle at once; the distribution must be
        the same)."""
        outcomes = self.chance_outcomes(state)
        probs = np.fromiter((p for _, p in outcomes), dtype=float, count=len(outcomes))
        return [outcomes[int(rng.choice(len(outcomes), p=probs / probs.sum()))][0]]

    def advance_chance(self, state: S, rng: np.random.Generator) -> int:
        """Apply chance outcomes drawn with `sample_chance` until a seat is to act or
        the game is over; returns `current_player` (tests, bots and benchmarks use it
        to reach the next decision of a random deal)."""
        while (player := self.current_player(state)) == CHANCE:
            for outcome in self.sample_chance(state, rng):
                self.apply(state, outcome)
        return player

    def forced_chance(self, options: Mapping[str, Any]) -> list[int | None]:
        """Chance outcomes that reproduce the deal(s) or dice given in reset options, in
        order; ``None`` leaves that one chance node to the random generator.

        Raises ValueError for a malformed or inconsistent specification. The default
        engine accepts no such options.
        """
        return []

    def forced_ran_out(self, options: Mapping[str, Any]) -> str | None:
        """What happens when the outcomes ``forced_chance(options)`` gave are used up
        and the game comes to another chance node: None (the default) draws it from the
        env's generator, as the later deals of a match after forced first deals; a
        string is the message of the ValueError the env raises instead (a scripted dice
        list must not run on into random dice unnoticed)."""
        return None

    def check_invariants(self, state: S) -> None:
        """Raise AssertionError, saying what is wrong, if ``state`` breaks the game's
        bookkeeping (cards conserved, counts consistent, …). The default checks nothing;
        `parlour.envs.core.soak` calls it after every step of every soak game."""

    def info(self, state: S) -> dict[str, Any]:
        """The public record of the game so far (scores, tricks, dice …), served by
        the env's ``details()``; public facts only."""
        return {}

    def rule_tables(self) -> dict[str, Any]:
        """The rule variant's constant tables in JSON form (card orders, scoring
        tables, contracts …), hashed into the rules fingerprint that checkpoints
        carry (`parlour.envs.core.fingerprint`). The default gives the pack (names,
        suits, ranks) of an engine with a ``deck``; each game adds its own tables, so
        a changed table refuses the checkpoints trained on the old one."""
        deck = getattr(self, "deck", None)
        if deck is None:
            return {}
        return {
            "pack": {
                "names": list(deck.names),
                "suits": list(deck.suit),
                "ranks": list(deck.rank),
            }
        }

    def legal_names(self, state: S) -> list[str]:
        """Names of the legal actions (for error messages and the play CLI)."""
        return [self.action_name(a) for a in self.legal_actions(state)]

    def illegal(self, state: S, action: int, reason: str) -> IllegalActionError:
        """An `IllegalActionError` naming the action, the reason and the legal
        actions."""
        try:
            name = self.action_name(action)
        except (IndexError, ValueError):
            name = str(action)
        legal = ", ".join(self.legal_names(state)) or "none"
        return IllegalActionError(
            f"illegal action {name} ({action}): {reason}; legal: {legal}"
        )


def check_keys(where: str, given: Mapping[str, Any], allowed: Sequence[str]) -> None:
    """Raise ValueError if ``given`` has keys outside ``allowed`` (typos must not pass
    silently)."""
    if not isinstance(given, Mapping):
        raise ValueError(f"{where} must be a dict, got {type(given).__name__}")
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        raise ValueError(
            f"unknown {where} key(s) {unknown}; allowed: {sorted(allowed)}"
        )


def check_choice(name: str, value: Any, choices: Sequence[Any]) -> Any:
    """Return ``value`` if it is one of ``choices``, else raise ValueError saying so."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value


def check_inert(name: str, value: Any, left_out: Any, why: str) -> None:
    """Refuse an option that cannot change the game in the chosen setting.

    The rule every game follows: such an option raises ValueError when its value differs
    from the one it takes when left out (``left_out``; None where the setting has no
    such thing at all, e.g. an auction-only option without an auction). Writing out that
    value is accepted, so option dicts that spell out every option (configs, stored
    checkpoint options, `parlour.envs.game_options`) keep working; any other value would
    silently do nothing, which is almost certainly a mistake. ``why`` completes "has no
    effect …" (e.g. "with episode='deal'").
    """
    if value != left_out:
        raise ValueError(f"{name}={value!r} has no effect {why}; leave it out")


def check_seat(name: str, value: Any, num_players: int) -> int:
    """Return ``value`` as a seat index or raise ValueError."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(
            f"{name} must be a seat number 0..{num_players - 1}, got {value!r}"
        )
    if not 0 <= int(value) < num_players:
        raise ValueError(
            f"{name} must be a seat number 0..{num_players - 1}, got {value}"
        )
    return int(value)
