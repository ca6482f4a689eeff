"""Forty-Fives, Twenty-Five, Auction Forty-Fives (120) and One Hundred and Ten: the
engine.

Implements the rule book *Forty-Fives: Ausführliche Regeln* (German) with its lost trump
table and every gap resolved as in the rules notes §1; ``docs/games/forty_fives.md``
lists each rule with the sentence it rests on. Plain Python, no RNG: the deal is a
sequence of chance outcomes (the first dealer, then the cards in the order they are
dealt: packets of 3 then 2 to each player from the dealer's left, the auction kitty
after the first round, then the stock from the top), so tests and
``reset(options={"deal": …})`` can force any deal.

Seed quotes in the comments are the seed's German, with the notes' reading where it
matters.

The `FortyFives` class is put together from the parts of the game, one module each:
`dealing` (the deal, the turned card, forced deals), `auction` (bidding and the kitty),
`play` (legal cards, robbing, the trick), `scoring` (the deal's points, the match, the
returns) and `invariants`; the pack, card orders and action space are in `tables`, and
re-exported here. This module holds the options, the dispatch of actions by phase, the
legal actions and the names.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.cards import SUITS, cards_in, parse_suit
from ..core.engine import (
    CHANCE,
    TERMINAL,
    Game,
    check_choice,
    check_inert,
)
from . import observation
from .auction import Auction
from .dealing import Dealing
from .invariants import Invariants
from .play import TrickPlay
from .scoring import Scoring
from .state import Phase, State
from .tables import (
    ACE_OF_HEARTS,
    AUCTION_VARIANTS,
    BID,
    BID_LEVELS,
    BONUS_POINTS,
    DECK,
    DEFAULT_MAX_DEALS,
    DISCARD,
    DONE,
    EPISODES,
    HAND_SIZE,
    HEARTS,
    HOLD,
    KITTY,
    KITTY_SIZE,
    NOROB,
    NUM_ACTIONS,
    PACKETS,
    PASS,
    PLAIN_MASK,
    PLAIN_ORDER,
    PLAY,
    PROTECTED,
    ROB,
    STOCK,
    STRENGTH,
    TARGETS,
    TOP_TRUMPS,
    TRICK_POINTS,
    TRUMP,
    TRUMP_BASE,
    TRUMP_MASK,
    TRUMP_ORDER,
    VARIANTS,
    team_layout,
)


class FortyFives(Dealing, Auction, TrickPlay, Scoring, Invariants, Game[State]):
    """One Forty-Fives variant for 2 to 6 players.

    Options (see ``docs/games/forty_fives.md`` for each one's source):
        players: 2..6 (default 4). 4 and 6 play as two sides (seats {0,2},{1,3} and
            {0,2,4},{1,3,5}); 2, 3 and 5 play each for himself.
        variant: "forty_fives" (seed, default), "twenty_five", "auction" (120) or
            "one_ten".
        episode: "match" (default: to the target score) or "deal" (one deal).
        target: the winning score (default 45 / 25 / 120 / 110 by variant).
        void_must_trump: a player void in a plain suit led must trump if he can (seed:
            True; the standard rule, any card, is False).
        packets: "3+2" (default) or "2+3": the deal's packet sizes.
        bidder_leads: auction only: the bidder leads the first trick (seed: True;
            Hoyle: the player on his left, False).
        thirty_for_sixty: auction only: a made bid of 30 scores 60 (Hoyle; seed: False).
        bidder_out_first: auction only: when both sides reach the target in one deal,
            the bidding side wins ("counts out first"; seed: the higher score, False).
        max_deals: deal limit of a match (default 100): the game then ends with the
            leader winning, or a draw if the lead is shared.

    An option that cannot matter in the chosen setting raises ValueError unless it has
    the value it takes when left out (`check_inert`): the auction-only options outside
    the auction variants; with ``episode="deal"``, ``max_deals``, ``bidder_out_first``
    and (except in Twenty-Five and 110, where it acts within a deal) ``target``.
    """

    reset_option_keys = frozenset({"dealer"})
    zero_sum = True

    def __init__(
        self,
        players: int = 4,
        variant: str = "forty_fives",
        episode: str = "match",
        target: int | None = None,
        void_must_trump: bool = True,
        packets: str = "3+2",
        bidder_leads: bool | None = None,
        thirty_for_sixty: bool | None = None,
        bidder_out_first: bool | None = None,
        max_deals: int = DEFAULT_MAX_DEALS,
    ):
        if (
            isinstance(players, bool)
            or not isinstance(players, int)
            or not 2 <= players <= 6
        ):
            raise ValueError(f"players must be an integer 2..6, got {players!r}")
        self.variant = check_choice("variant", variant, VARIANTS)
        self.episode = check_choice("episode", episode, EPISODES)
        self.auction = variant in AUCTION_VARIANTS
        self.one_ten = variant == "one_ten"
        self.twenty_five = variant == "twenty_five"
        if target is None:
            target = TARGETS[variant]
        if isinstance(target, bool) or not isinstance(target, int) or target < 5:
            raise ValueError(f"target must be an integer of at least 5, got {target!r}")
        if episode == "deal" and variant in ("forty_fives", "auction"):
            # Twenty-Five stops a deal at the target, 110 caps the other sides at
            # target - 5: there a target acts within one deal too.
            check_inert(
                "target",
                target,
                TARGETS[variant],
                f"with episode='deal' and variant={variant!r} (one deal has no "
                "target; only twenty_five and one_ten use it within a deal)",
            )
        self.target = target
        self.void_must_trump = _flag("void_must_trump", void_must_trump)
        self.packets = PACKETS[check_choice("packets", packets, list(PACKETS))]
        self.packet_option = packets
        auction_only = {
            "bidder_leads": (bidder_leads, True),
            "thirty_for_sixty": (thirty_for_sixty, False),
            "bidder_out_first": (bidder_out_first, False),
        }
        for name, (value, default) in auction_only.items():
            if value is None:
                value = default
            elif not self.auction:
                raise ValueError(
                    f"{name} applies to the auction variants ('auction', 'one_ten') "
                    f"only, not to variant={variant!r}"
                )
            setattr(self, name, _flag(name, value))
        if (
            isinstance(max_deals, bool)
            or not isinstance(max_deals, int)
            or max_deals < 1
        ):
            raise ValueError(f"max_deals must be a positive integer, got {max_deals!r}")
        if episode == "deal":
            why = "with episode='deal' (it decides how a match ends)"
            check_inert("max_deals", max_deals, DEFAULT_MAX_DEALS, why)
            if self.auction:
                check_inert("bidder_out_first", self.bidder_out_first, False, why)
        self.max_deals = max_deals

        self.deck = DECK
        self.name = "forty_fives_v0"
        self.num_players = n = players
        self.num_actions = NUM_ACTIONS
        self._teams = team_layout(n)
        self.num_teams = len(self._teams)
        self.team_of = [0] * n
        for i, team in enumerate(self._teams):
            for s in team:
                self.team_of[s] = i
        self.stock_size = (
            DECK.size - HAND_SIZE * n - (KITTY_SIZE if self.auction else 0)
        )
        self._dest = [self._deal_destinations(d) for d in range(n)]
        # "the 110 rule": a side that is not bidding cannot rise above target - 5
        self.cap = target - 5 if self.one_ten else None
        self.observation_size = observation.size(self)
        self.obs_layout = observation.Layout(self)

    def __repr__(self) -> str:
        return (
            f"FortyFives(players={self.num_players}, variant={self.variant!r}, "
            f"episode={self.episode!r})"
        )

    def teams(self) -> list[list[int]]:
        """The seats of each side (the arena and the rewards use them)."""
        return [t[:] for t in self._teams]

    def rule_tables(self) -> dict[str, Any]:
        """The card orders, the trump sets, the points and bids, the sides and the
        deal's order (`Game.rule_tables`)."""
        return {
            **super().rule_tables(),
            "trump_order": TRUMP_ORDER,
            "plain_order": PLAIN_ORDER,
            "strength": STRENGTH,
            "trump_mask": TRUMP_MASK,
            "plain_mask": PLAIN_MASK,
            "top_trumps": TOP_TRUMPS,
            "protected": PROTECTED,
            "trick_points": TRICK_POINTS,
            "bonus_points": BONUS_POINTS,
            "bid_levels": list(BID_LEVELS),
            "targets": TARGETS,
            "hand_size": HAND_SIZE,
            "kitty_size": KITTY_SIZE,
            "packets": list(self.packets),
            "teams": self._teams,
            "deal_destinations": self._dest,
            "cap": self.cap,
        }

    def new_state(self) -> State:
        return State(self.num_players, self.num_teams)

    def current_player(self, state: State) -> int:
        phase = state.phase
        if phase >= Phase.BID:
            return TERMINAL if phase == Phase.OVER else state.to_play
        return CHANCE

    def apply(self, state: State, action: int) -> None:
        phase = state.phase
        if phase == Phase.PLAY:
            if ROB <= action <= NOROB:
                self._rob(state, action)
            else:
                self._play(state, action)
        elif phase == Phase.DEAL:
            self._deal_card(state, action)
        elif phase == Phase.BID:
            self._bid(state, action)
        elif phase == Phase.DISCARD:
            self._discard(state, action)
        elif phase == Phase.TRUMP:
            self._name_trumps(state, action)
        elif phase == Phase.CHOOSE_DEALER:
            if isinstance(action, bool) or action not in range(self.num_players):
                raise self.illegal(
                    state, action, f"the dealer is a seat 0..{self.num_players - 1}"
                )
            # "den ersten Geber auslosen"
            state.dealer = action
            state.phase = Phase.DEAL
        else:
            raise self.illegal(state, action, "the game is over")

    # --- legal actions ----------------------------------------------------------------
    def legal_actions(self, state: State) -> list[int]:
        phase = state.phase
        if phase == Phase.PLAY:
            plays = cards_in(self.legal_mask(state))
            if state.to_play == state.rob_seat:
                # "Geraubt wird, bevor du deine erste Karte spielst": at his first turn
                # the eligible player may rob (then plays) or play at once (the right
                # lapses), so a decline looks like any other first card.
                plays += [ROB + c for c in cards_in(state.hands[state.to_play])]
            return plays
        if phase == Phase.BID:
            return self._legal_bids(state)
        if phase == Phase.TRUMP:
            return [TRUMP + s for s in range(4)]
        if phase == Phase.DISCARD:
            return self._legal_discards(state)
        return []

    def legal_bits(self, state: State) -> int:
        """`legal_actions` as a bitmask (bit ``a`` for action ``a``), for the adapter's
        action mask; card play and robbing need no list."""
        phase = state.phase
        if phase == Phase.PLAY:
            if state.to_play == state.rob_seat:
                return self.legal_mask(state) | state.hands[state.to_play] << ROB
            return self.legal_mask(state)
        out = 0
        for action in self.legal_actions(state):
            out |= 1 << action
        return out

    def info(self, state: State) -> dict[str, Any]:
        """Public facts: phase, deal, dealer, trumps, contract, robber, scores."""
        return {
            "phase": state.phase.name.lower(),
            "deal": state.deal_no,
            "dealer": state.dealer,
            "trump": SUITS[state.trump] if state.trump >= 0 else None,
            "turned": DECK.format(state.turned) if state.turned >= 0 else None,
            "robbed_by": state.robbed_by,
            "bidder": state.bidder,
            "contract": state.contract,
            "scores": tuple(state.scores),
            "tricks": tuple(state.tricks_won),
            "winner_team": state.winner if state.phase == Phase.OVER else None,
        }

    # --- names, observation, rendering ------------------------------------------------
    def action_name(self, action: int) -> str:
        if isinstance(action, bool) or not 0 <= action < NUM_ACTIONS:
            raise ValueError(f"action {action!r} is out of range 0..{NUM_ACTIONS - 1}")
        if action < ROB:
            return DECK.format(action)
        if action < NOROB:
            return "rob:" + DECK.format(action - ROB)
        if action < DISCARD:
            return _NAMES[action - NOROB]
        if action < DONE:
            return "discard:" + DECK.format(action - DISCARD)
        return "done"

    def action_id(self, name: str) -> int:
        if not isinstance(name, str):
            raise ValueError(f"action name must be a string, got {name!r}")
        text = name.strip()
        low = text.lower()
        if low in _IDS:
            return _IDS[low]
        head, sep, arg = text.partition(":")
        head = head.strip().lower()
        try:
            if sep and head == "rob":
                return ROB + DECK.card(arg)
            if sep and head == "discard":
                return DISCARD + DECK.card(arg)
            if sep and head == "trump":
                return TRUMP + parse_suit(arg)
            if not sep:
                return PLAY + DECK.card(text)
        except ValueError as err:
            raise ValueError(f"bad action name {name!r}: {err}") from None
        raise ValueError(
            f"unknown action name {name!r}: expected a card ('QS'), 'rob:X', 'norob', "
            "'pass', 'bid:15'..'bid:30', 'hold', 'trump:S', 'discard:X' or 'done'"
        )

    def observe(self, state: State, player: int) -> np.ndarray:
        return observation.encode(self, state, player)

    def render(self, state: State, viewer: int | None = None) -> str:
        return observation.render(self, state, viewer)


_NAMES = [
    "norob",
    "pass",
    "bid:15",
    "bid:20",
    "bid:25",
    "bid:30",
    "hold",
    "trump:S",
    "trump:H",
    "trump:D",
    "trump:C",
]
_IDS = {name: NOROB + i for i, name in enumerate(_NAMES)} | {"done": DONE}


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value


# The tables are re-exported: the bots and solvers read them as rules.NAME.
__all__ = [
    "FortyFives",
    "Phase",
    "State",
    "ACE_OF_HEARTS",
    "AUCTION_VARIANTS",
    "BID",
    "BID_LEVELS",
    "BONUS_POINTS",
    "DECK",
    "DEFAULT_MAX_DEALS",
    "DISCARD",
    "DONE",
    "EPISODES",
    "HAND_SIZE",
    "HEARTS",
    "HOLD",
    "KITTY",
    "KITTY_SIZE",
    "NOROB",
    "NUM_ACTIONS",
    "PACKETS",
    "PASS",
    "PLAIN_MASK",
    "PLAIN_ORDER",
    "PLAY",
    "PROTECTED",
    "ROB",
    "STOCK",
    "STRENGTH",
    "TARGETS",
    "TOP_TRUMPS",
    "TRICK_POINTS",
    "TRUMP",
    "TRUMP_BASE",
    "TRUMP_MASK",
    "TRUMP_ORDER",
    "VARIANTS",
    "team_layout",
]
