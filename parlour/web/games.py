"""The games behind the pages: a table driven move by move by names, a live game of a
browser seat against bots, and what a page may show of a position.

A game is its env, options, seed and the names of the moves played: `Table` plays
them again from the seed (the env deals and rolls from it), so a stored game is
rebuilt exactly after a restart and any stored game can be replayed move by move.
Every move goes through the engine's legal actions; a name that is not legal there is
refused with `MoveRefused`.

Hidden information: `seat_page` is everything a play page shows, and it is built
only from the seat's text view (`parlour.text.view`), the seat's own hand, its legal
moves, the public names of the moves played and the final scores. It never reads
another seat's hand or the stock. The env seed (from which the deal follows) is not
shown until the game is over.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import envs
from ..agents.base import Agent, Turn
from ..envs.core.cards import SUIT_SYMBOLS, SUITS, cards_in
from ..envs.core.engine import TERMINAL

#: Actions whose argument only the acting seat may know: a Forty-Fives robber buries a
#: card face down (``rob:X``) and an auction player discards face down
#: (``discard:X``). Other seats see only the kind of move.
PRIVATE_ARGUMENT = ("rob", "discard")
#: seed offset per seat for the bots, as the league seeds its agents
SEAT_SEED = 7919


class MoveRefused(ValueError):
    """A move name that is not legal (or not this seat's) in the current position."""


class GameOver(ValueError):
    """A move sent to a game that has ended."""


class StaleMove(ValueError):
    """A move sent from a page that no longer shows the current position."""


def check_options(env_name: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The env's options as given, checked: unknown env or option names and bad values
    raise ValueError with one line."""
    envs.record(env_name)
    envs.game_options(env_name, dict(options))
    try:
        envs.make(env_name, raw=True, **options)
    except (TypeError, AssertionError) as err:  # a value of the wrong type
        raise ValueError(f"bad options for {env_name}: {err}") from None
    return dict(options)


class Table:
    """One game of ``env_name`` played by move names from ``seed``."""

    def __init__(
        self,
        env_name: str,
        options: Mapping[str, Any],
        seed: int | None,
        reset_options: Mapping[str, Any] | None = None,
    ):
        self.env_name = env_name
        self.env = envs.make(env_name, **dict(options))
        self.env.reset(
            seed=seed, options=dict(reset_options) if reset_options else None
        )
        self.raw = self.env.unwrapped
        self.game = self.raw.game
        self.moves: list[tuple[int, str]] = []  # (seat, action name) in order
        self.deals: list[int] = []  # the deal each move was played in

    @property
    def state(self) -> Any:
        return self.raw.game_state

    @property
    def to_act(self) -> int:
        """The seat to act, or `TERMINAL`."""
        return self.game.current_player(self.state)

    @property
    def over(self) -> bool:
        return self.to_act == TERMINAL

    @property
    def deal(self) -> int:
        """The deal being played (0 in a game of one deal or none)."""
        return int(getattr(self.state, "deal_no", 0))

    def legal_names(self) -> list[str]:
        """The legal moves of the seat to act, by name (none once over)."""
        if self.over:
            return []
        return [self.game.action_name(a) for a in self.game.legal_actions(self.state)]

    def play(self, name: str) -> None:
        """Play the move ``name`` for the seat to act; `MoveRefused` if not legal."""
        if self.over:
            raise GameOver("the game is over")
        legal = {
            self.game.action_name(a): a for a in self.game.legal_actions(self.state)
        }
        if name not in legal:
            raise MoveRefused(
                f"{name!r} is not a legal move for player_{self.to_act} now; legal: "
                f"{', '.join(legal)}"
            )
        self.moves.append((self.to_act, name))
        self.deals.append(self.deal)
        self.env.step(int(legal[name]))

    def turn(self) -> Turn:
        """The seat to act's decision, as agents see it."""
        seat = self.to_act
        obs = self.raw.observe(self.raw.possible_agents[seat])
        return Turn(self.game, self.state, seat, obs["observation"], obs["action_mask"])

    def bot_move(self, agent: Agent) -> str:
        """Let ``agent`` choose the seat to act's move, play it and return its name."""
        action = int(agent.act(self.turn()))
        name = self.game.action_name(action)
        self.play(name)
        return name

    def returns(self) -> list[float]:
        """Each seat's total so far (the final result once over)."""
        return [float(x) for x in self.game.returns(self.state)]

    def sides(self) -> list[list[int]]:
        """The seats that share a result."""
        teams = getattr(self.game, "teams", None)
        if callable(teams):
            return [list(t) for t in teams()]
        return [[s] for s in range(self.game.num_players)]


def replay_table(
    env_name: str,
    options: Mapping[str, Any],
    seed: int | None,
    moves: Sequence[str],
    reset_options: Mapping[str, Any] | None = None,
    upto: int | None = None,
) -> Table:
    """A `Table` with the first ``upto`` (default: all) ``moves`` played again."""
    table = Table(env_name, options, seed, reset_options)
    for i, name in enumerate(moves[:upto]):
        try:
            table.play(name)
        except (MoveRefused, GameOver) as err:
            raise MoveRefused(f"stored move {i + 1} ({name}): {err}") from None
    return table


# --- what a page shows ----------------------------------------------------------------
def card_face(game: Any, card: int) -> dict[str, Any]:
    """A card as the page draws it: rank, suit symbol, colour."""
    name = game.deck.format(card)
    if name.startswith("JK"):  # Honeymoon Whist's jokers
        return {"rank": name, "suit": "", "red": name == "JKH"}
    suit = SUITS.index(name[-1])
    return {"rank": name[:-1], "suit": SUIT_SYMBOLS[suit], "red": suit in (1, 2)}


def hand_faces(game: Any, state: Any, seat: int) -> list[dict[str, Any]]:
    """The seat's own hand as cards (none in a dice game)."""
    hands = getattr(state, "hands", None)
    if hands is None or not hasattr(game, "deck"):
        return []
    return [card_face(game, c) for c in cards_in(hands[seat])]


def _card_id(game: Any, token: str) -> int | None:
    names = getattr(getattr(game, "deck", None), "names", None)
    if names is None or token not in names:
        return None
    return list(names).index(token)


def move_label(game: Any, name: str) -> dict[str, Any]:
    """A move name as a button shows it: a card play drawn as the card, another move
    as words with its cards' suit symbols (``rob:7C`` -> ``rob 7♣``)."""
    head, at, end = name.partition("@")  # Herzeln Domino: "QH@top"
    card = _card_id(game, head)
    if card is not None:
        face = card_face(game, card)
        return {"card": face, "text": f"at the {end}" if at else ""}
    kind, sep, arg = name.partition(":")
    if kind == "trump" and arg in SUITS:  # naming trumps: "trump:S" -> "trump ♠"
        return {"card": None, "text": f"trump {SUIT_SYMBOLS[SUITS.index(arg)]}"}
    words = []
    for part in name.split(":"):
        c = _card_id(game, part)
        words.append(part if c is None else game.deck.pretty(c))
    return {"card": None, "text": " ".join(words)}


def public_move(name: str) -> str:
    """What the other seats learn of a move: its name, less a private argument."""
    kind, sep, _ = name.partition(":")
    return kind if sep and kind in PRIVATE_ARGUMENT else name


def seat_text(game: Any, state: Any, seat: int) -> str:
    """What ``seat`` can see of the table, as the text agents read it."""
    from ..text import view

    return view(game, state, seat)


def result_rows(table: Table, human: int | None = None) -> list[dict[str, Any]]:
    """Each side's final score: its seats and the mean return of its seats."""
    returns = table.returns()
    rows = []
    for side in table.sides():
        seats = ", ".join(
            f"player_{s}" + (" (you)" if s == human else "") for s in side
        )
        score = sum(returns[s] for s in side) / len(side)
        rows.append({"seats": seats, "score": f"{score:g}"})
    return rows


def seat_page(
    table: Table, seat: int, since: int = 0, finished: bool | None = None
) -> dict[str, Any]:
    """Everything the play page of ``seat`` shows (and nothing more): the seat's text
    view and hand, whose turn, the moves of this deal played since move ``since`` by
    their public names, its legal moves when it is to act, and the result once the
    game is over."""
    game, state = table.game, table.state
    over = table.over if finished is None else finished
    mine = not over and table.to_act == seat
    # An earlier deal's cards are dealt again: its moves would name cards that are now
    # in other hands, so they are left out (its result is in the scores).
    recent = [
        {
            "seat": s,
            "you": s == seat,
            **move_label(game, name if s == seat else public_move(name)),
        }
        for (s, name), deal in zip(
            table.moves[since:], table.deals[since:], strict=True
        )
        if deal == table.deal or over
    ]
    return {
        "view": seat_text(game, state, seat),
        "hand": hand_faces(game, state, seat),
        "to_act": None if over else table.to_act,
        "your_turn": mine,
        "moves": [{"name": n, **move_label(game, n)} for n in table.legal_names()]
        if mine
        else [],
        "recent": recent,
        "result": result_rows(table, seat) if over else None,
        "ply": len(table.moves),
    }


def open_page(table: Table, seat: int | None) -> dict[str, Any]:
    """What a replay frame shows: the open deal (every hand) or one seat's view."""
    game, state = table.game, table.state
    players = range(game.num_players)
    if seat is None:
        text = game.render(state, None)
        hands = [(p, hand_faces(game, state, p)) for p in players]
    else:
        text = seat_text(game, state, seat)
        hands = [(seat, hand_faces(game, state, seat))]
    return {
        "view": text,
        "hands": [{"seat": p, "cards": cards} for p, cards in hands if cards],
        "to_act": None if table.over else table.to_act,
        "result": result_rows(table) if table.over else None,
    }


# --- a live game ----------------------------------------------------------------------
@dataclass
class LiveGame:
    """A game between the browser's seat ``human`` and bots (``agents``: one per seat,
    None at the human's). ``lock`` serialises its moves."""

    id: str
    env_name: str
    options: dict[str, Any]
    seed: int
    seats: list[str]  # agent spec per seat as the page names it; "human" for the human
    human: int
    agents: list[Agent | None]
    table: Table
    lock: threading.Lock = field(default_factory=threading.Lock)

    def advance(self) -> None:
        """Let the bots move until the human is to act or the game is over."""
        while not self.table.over and self.table.to_act != self.human:
            agent = self.agents[self.table.to_act]
            assert agent is not None
            self.table.bot_move(agent)

    def human_move(self, name: str, ply: int) -> None:
        """Play the human's move ``name`` from a page that showed ``ply`` moves."""
        if self.table.over:
            raise GameOver("this game is over: start a new one")
        if ply != len(self.table.moves):
            raise StaleMove(
                f"the page was for move {ply}, the game is at move "
                f"{len(self.table.moves)}: reload it"
            )
        self.table.play(name)
        self.advance()

    @property
    def move_names(self) -> list[str]:
        return [name for _, name in self.table.moves]

    def since(self) -> int:
        """Where the moves the human has not seen yet start: at its last move."""
        mine = [i for i, (s, _) in enumerate(self.table.moves) if s == self.human]
        return mine[-1] if mine else 0


def build_bots(
    env_name: str,
    options: Mapping[str, Any],
    specs: Sequence[str | None],
    seed: int,
) -> list[Agent | None]:
    """One agent per seat from resolved specs (None: the human's seat), seeded from the
    game's seed as the league seeds its agents."""
    from .. import agents as agents_mod

    out: list[Agent | None] = []
    for s, spec in enumerate(specs):
        if spec is None:
            out.append(None)
            continue
        agent = agents_mod.make(spec, env_name, seed=s, env_options=dict(options))
        agent.reset(seed=seed + SEAT_SEED * (s + 1))
        out.append(agent)
    return out


__all__ = [
    "GameOver",
    "LiveGame",
    "MoveRefused",
    "StaleMove",
    "Table",
    "build_bots",
    "check_options",
    "open_page",
    "replay_table",
    "seat_page",
]
