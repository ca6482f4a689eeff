"""Herzeln: the rules engine for the eight-contract partie (3 or 4 players).

Implements the rule book (the English Wikipedia text on Herzeln, after the Piatnik
rule book) with its gaps resolved as in the rules notes §4;
``docs/games/herzeln.md`` lists every rule with the sentence it rests on. Plain Python,
no RNG: the deal is a sequence of chance outcomes (the first dealer, then each deal's
cards in the order hand 0, hand 1, …), so tests and ``reset(options={"deal": …})`` can
force any deal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..core import picklable
from ..core.cards import GERMAN_32, SHORT_24, cards_in, held_bit, mask_of
from ..core.deal import check_partition, forced_deals, parse_hands
from ..core.engine import (
    CHANCE,
    TERMINAL,
    Game,
    check_choice,
    check_inert,
)
from . import observation
from .state import Phase, State

# "A partie in Herzeln comprises a series of eight individual hands (Touren), each of
# which is a separate contract." The order is the seed's.
CONTRACTS = (
    # Herz: "Ace: 11, Ten: 10, King: 4, Queen: 3, Jack, 2, Nine, Eight and Seven: 1"
    "no_hearts",
    "tricks",  # Jeder Stich: "Each trick taken is worth 10 points."
    "no_tricks",  # Kein Stich: "10 points are deducted for each trick taken."
    "no_queens",  # Ober: "penalised 20 points for each Ober/Queen captured"
    "king_of_hearts",  # Herzkönig: "penalised 40 points"
    "last_trick",  # Letzter: "only the last trick counts and is worth 40 points"
    "no_last_trick",  # Kein Letzter: "winning the last trick costs 40 minus points"
    "domino",  # Unteranlegen
)
NO_HEARTS, TRICKS, NO_TRICKS, NO_QUEENS, KING_OF_HEARTS = range(5)
LAST_TRICK, NO_LAST_TRICK, DOMINO = range(5, 8)
LAYOUTS = ("single_cyclic_line", "per_suit_rows")
#: the deals ``early_end`` can shorten: they end once their penalty cards are taken
PENALTY_CARD_CONTRACTS = (NO_HEARTS, NO_QUEENS, KING_OF_HEARTS)
EPISODES = ("partie", "deal")
HAND_SIZE = 8  # rules-notes §4.3: all cards are dealt, 8 each (32/4 or 24/3)
TRICKS_PER_DEAL = 8
HEARTS = 1
HEART_PENALTY = {"A": -11, "10": -10, "K": -4, "Q": -3, "J": -2}  # 9, 8, 7: -1 each
# "Ace (high) – Ten – King – Queen – Jack – Nine (low)" / "Deuces [Daus] (high) – Ten –
# King – Ober – Unter – Nine - Eight - Seven (low)": the trick order, and (rules-notes
# §4.3) the order in which the Domino line is built, lowest first.
GAME_ORDER_LOW_FIRST = ("7", "8", "9", "J", "Q", "K", "10", "A")
# The natural order of the per-suit-rows reading (Unteransetzen), lowest first.
NATURAL_ORDER_LOW_FIRST = ("7", "8", "9", "10", "J", "Q", "K", "A")
# What one deal distributes in all (rules-notes §4.3 "Per-deal totals"), checked after
# every deal.
DEAL_TOTALS = {
    4: (-33, 80, -80, -80, -40, 40, -40, -60),
    3: (-31, 80, -80, -80, -40, 40, -40, -30),
}
# "the second to go out gets 10 minus points, the third 20 and the fourth 30"
DOMINO_STEP = -10


class Herzeln(Game[State]):
    """Herzeln for ``players`` = 3 (24 French cards) or 4 (32 German cards).

    Options:
        players: 3 or 4 (default 4).
        episode: ``"partie"`` (the eight deals in the seed's order, dealer rotating) or
            ``"deal"`` (one deal of ``contract``). Default: ``"deal"`` when ``contract``
            is given, else ``"partie"``.
        contract: the contract of a one-deal episode, one of `CONTRACTS`.
        domino_layout: ``"single_cyclic_line"`` (rules-notes §4.3, default: one line for
            all suits in the game's ranking, aces turning the corner) or
            ``"per_suit_rows"`` (the Unteransetzen reading: a row per suit from its Jack
            in natural order, the holder of the Jack of hearts starting).
        early_end: end a penalty-card deal (No Hearts, No Queens, King of Hearts) once
            all its penalty cards are taken (default False, rules-notes: play all 8
            tricks; the score is the same either way).

    ``domino_layout`` without the Domino deal and ``early_end`` without a penalty-card
    deal (a one-deal episode of another contract) change nothing, so any value but the
    default raises ValueError (`check_inert`).
    """

    zero_sum = False  # penalty contracts sum to negative totals (see DEAL_TOTALS)
    reset_option_keys = frozenset({"dealer"})

    def __init__(
        self,
        players: int = 4,
        episode: str | None = None,
        contract: str | None = None,
        domino_layout: str = "single_cyclic_line",
        early_end: bool = False,
    ):
        if isinstance(players, bool) or not isinstance(players, int):
            raise ValueError(f"players must be 3 or 4, got {players!r}")
        self.num_players = check_choice("players", players, (3, 4))
        if episode is None:
            episode = "deal" if contract is not None else "partie"
        self.episode = check_choice("episode", episode, EPISODES)
        if episode == "deal":
            if contract is None:
                raise ValueError(
                    "episode='deal' needs contract=NAME, one of: "
                    + ", ".join(CONTRACTS)
                )
            if contract not in CONTRACTS:
                raise ValueError(
                    f"unknown contract {contract!r}; valid contracts: "
                    + ", ".join(CONTRACTS)
                )
            self.contracts: tuple[int, ...] = (CONTRACTS.index(contract),)
        else:
            if contract is not None:
                raise ValueError(
                    "contract=NAME is only for episode='deal'; a partie plays all "
                    "eight contracts in the seed's order"
                )
            self.contracts = tuple(range(len(CONTRACTS)))
        self.contract = contract
        self.domino_layout = check_choice("domino_layout", domino_layout, LAYOUTS)
        if not isinstance(early_end, bool):
            raise ValueError(f"early_end must be True or False, got {early_end!r}")
        if DOMINO not in self.contracts:
            check_inert(
                "domino_layout",
                domino_layout,
                LAYOUTS[0],
                f"without the Domino deal (contract={contract!r})",
            )
        if not any(k in PENALTY_CARD_CONTRACTS for k in self.contracts):
            check_inert(
                "early_end",
                early_end,
                False,
                f"without a penalty-card deal (contract={contract!r}; it ends No "
                "Hearts, No Queens and King of Hearts early)",
            )
        self.early_end = early_end
        n = self.num_players
        # "In three-hand games a pack of 24 French playing cards is used … In
        # four-player games, the standard German 32-card pack is used"
        self.deck = SHORT_24 if n == 3 else GERMAN_32
        self.german = n == 4
        deck = self.deck
        self.N = N = deck.size
        self.num_ranks = R = N // 4
        self.PASS = 3 * N
        self.name = "herzeln_v0"
        self.num_actions = 3 * N + 1
        names = deck.names
        ranks = [name[:-1] for name in names]
        present = [r for r in GAME_ORDER_LOW_FIRST if r in set(ranks)]
        natural = [r for r in NATURAL_ORDER_LOW_FIRST if r in set(ranks)]
        # Trick strength = position in the game's order, lowest 0; also the Domino cycle
        # position.
        self.strength = tuple(present.index(r) for r in ranks)
        self.suit = deck.suit
        self.suit_mask = deck.suit_mask
        self.jacks = mask_of(c for c in range(N) if ranks[c] == "J")
        self.jack_of_hearts = deck.card("JH")
        self.queens = mask_of(c for c in range(N) if ranks[c] == "Q")
        self.king_of_hearts = deck.card("KH")
        # Points each card is worth to the taker, per contract (card-based contracts
        # only).
        self.card_value = [[0] * N for _ in CONTRACTS]
        for c in range(N):
            if deck.suit[c] == HEARTS:
                self.card_value[NO_HEARTS][c] = HEART_PENALTY.get(ranks[c], -1)
            if ranks[c] == "Q":
                self.card_value[NO_QUEENS][c] = -20
        self.card_value[KING_OF_HEARTS][self.king_of_hearts] = -40
        self.penalty_cards = [
            mask_of(c for c in range(N) if v[c]) for v in self.card_value
        ]
        self.trick_value = [0, 10, -10, 0, 0, 0, 0, 0]
        self.last_trick_value = [0, 0, 0, 0, 0, 40, -40, 0]
        # The largest number of points one seat can take in each contract (observation
        # scale).
        hearts_total = -sum(self.card_value[NO_HEARTS])
        self.max_points = [hearts_total, 80, 80, 80, 40, 40, 40, -DOMINO_STEP * (n - 1)]
        # Domino lines. Single line: one line for every suit, cycle position = game
        # strength, so going up from the Jack is Q K 10 A and then (the corner) the
        # lowest rank again. Per-suit rows: line s holds suit s, cycle position =
        # natural order.
        self.per_suit = self.domino_layout == "per_suit_rows"
        if self.per_suit:
            self.num_lines = 4
            self.line_of = tuple(deck.suit)
            self.position = tuple(natural.index(r) for r in ranks)
        else:
            self.num_lines = 1
            self.line_of = (0,) * N
            self.position = self.strength
        # at[line][position]: the cards that sit at that position of that line
        self.at = [[0] * R for _ in range(self.num_lines)]
        for c in range(N):
            self.at[self.line_of[c]][self.position[c]] |= 1 << c
        self.line_cards = [
            mask_of(c for c in range(N) if self.line_of[c] == ln)
            for ln in range(self.num_lines)
        ]
        # Partie score range over the episode's contracts (observation scale).
        lows = [0, 0, -80, -80, -40, 0, -40, DOMINO_STEP * (n - 1)]
        lows[NO_HEARTS] = -self.max_points[NO_HEARTS]
        highs = [0, 80, 0, 0, 0, 40, 0, 0]
        self.score_low = sum(lows[k] for k in self.contracts)
        self.score_high = sum(highs[k] for k in self.contracts)
        # Longest episode: N plays per trick deal; in Domino N lays and, between two
        # lays, fewer passes than there are players (the layout cannot block).
        self.max_game_length = sum(N if k != DOMINO else n * N for k in self.contracts)
        self.observation_size = observation.size(self)
        # constants of the observation encoder (its hot path)
        self.obs_seats = tuple(tuple((p + k) % n for k in range(n)) for p in range(n))
        self.obs_scalars = picklable.Struct(f"={5 * n + 2}f")  # native order, as numpy

    def __repr__(self) -> str:
        return (
            f"Herzeln(players={self.num_players}, episode={self.episode!r}, "
            f"contract={self.contract!r}, domino_layout={self.domino_layout!r})"
        )

    # --- chance: who deals, and the deal ----------------------------------------------
    def new_state(self) -> State:
        return State(self.num_players, self.num_lines)

    def current_player(self, state: State) -> int:
        phase = state.phase
        if phase == Phase.TRICKS or phase == Phase.DOMINO:
            return state.to_play
        if phase == Phase.OVER:
            return TERMINAL
        return CHANCE

    def chance_outcomes(self, state: State) -> list[tuple[int, float]]:
        n = self.num_players
        if state.phase == Phase.CHOOSE_DEALER:
            # rules-notes §4.3: "The first dealer is random"
            return [(d, 1.0 / n) for d in range(n)]
        if state.phase == Phase.DEAL:
            left = cards_in(self.deck.all_mask & ~state.dealt)
            return [(c, 1.0 / len(left)) for c in left]
        raise ValueError("not a chance node")

    def sample_chance(self, state: State, rng: np.random.Generator) -> list[int]:
        if state.phase == Phase.DEAL:
            # The rest of the shuffle at once: the same distribution as card-by-card
            # draws.
            left = cards_in(self.deck.all_mask & ~state.dealt)
            return [left[i] for i in rng.permutation(len(left)).tolist()]
        return super().sample_chance(state, rng)

    def apply(self, state: State, action: int) -> None:
        phase = state.phase
        if phase == Phase.TRICKS:
            self._play(state, action)
        elif phase == Phase.DOMINO:
            self._domino(state, action)
        elif phase == Phase.DEAL:
            self._deal_card(state, action)
        elif phase == Phase.CHOOSE_DEALER:
            if (
                not isinstance(action, int | np.integer)
                or not 0 <= action < self.num_players
            ):
                raise self.illegal(state, action, "the first dealer is a seat number")
            state.dealer = int(action)
            state.phase = Phase.DEAL
        else:
            raise self.illegal(state, action, "the partie is over")

    def _deal_card(self, state: State, card: int) -> None:
        if not 0 <= card < self.N or (state.dealt >> card) & 1:
            raise self.illegal(state, card, "that card is not left in the pack")
        state.dealt |= 1 << card
        state.hands[state.dealt_count // HAND_SIZE] |= 1 << card
        state.dealt_count += 1
        if state.dealt_count == self.N:
            self._start_deal(state)

    def _start_deal(self, state: State) -> None:
        n = self.num_players
        state.contract = self.contracts[state.deal_no]
        state.played_by = [0] * n
        state.won = [0] * n
        state.tricks = [0] * n
        state.points = [0] * n
        state.voids = [0] * n
        state.trick = []
        state.lead_suit = -1
        state.last_trick = None
        # rules-notes §4.3: "The player on the dealer's left leads trick 1"
        first = (state.dealer + 1) % n
        if state.contract == DOMINO:
            state.phase = Phase.DOMINO
            state.line_top = [-1] * self.num_lines
            state.line_bottom = [-1] * self.num_lines
            state.laid = 0
            state.out_order = []
            state.passes = 0
            if self.per_suit:
                # Unteransetzen: "Usually the player with the Unter of Hearts leads"
                bit = 1 << self.jack_of_hearts
                first = next(p for p in range(n) if state.hands[p] & bit)
            state.to_play = first
        else:
            state.phase = Phase.TRICKS
            state.leader = state.to_play = first

    # --- trick play -------------------------------------------------------------------
    def legal_mask(self, state: State) -> int:
        """The legal cards of the player to act in a trick deal, as a bitmask."""
        hand = state.hands[state.to_play]
        if state.lead_suit < 0:
            return hand  # any card may be led (rules-notes: no Hearts-style lead ban)
        # "There is no trump suit; but players must follow suit (Farbzwang)."
        follow = hand & self.suit_mask[state.lead_suit]
        return follow or hand

    def legal_actions(self, state: State) -> list[int]:
        if state.phase == Phase.TRICKS:
            return cards_in(self.legal_mask(state))
        if state.phase == Phase.DOMINO:
            return self._domino_actions(state)
        return []

    def _play(self, state: State, card: int) -> None:
        player = state.to_play
        bit = held_bit(self, state, card, self.N)
        if not bit & self.legal_mask(state):
            raise self.illegal(state, card, "you must follow suit")
        state.hands[player] ^= bit
        state.played_by[player] |= bit
        trick = state.trick
        trick.append(card)
        if len(trick) == 1:
            state.lead_suit = self.suit[card]
        elif self.suit[card] != state.lead_suit:
            state.voids[player] |= 1 << state.lead_suit  # public: he cannot follow
        if len(trick) < self.num_players:
            state.to_play = (player + 1) % self.num_players
            return
        self._finish_trick(state)

    def _finish_trick(self, state: State) -> None:
        # "players must follow suit": the highest card of the suit led wins (no trumps),
        # in the order A 10 K Q J 9 8 7.
        trick, lead_suit = state.trick, state.lead_suit
        strength, suit = self.strength, self.suit
        best, best_i = strength[trick[0]], 0
        for i in range(1, len(trick)):
            c = trick[i]
            if suit[c] == lead_suit and strength[c] > best:
                best, best_i = strength[c], i
        winner = (state.leader + best_i) % self.num_players
        k = state.contract
        values = self.card_value[k]
        mask = 0
        pts = self.trick_value[k]
        for c in trick:
            mask |= 1 << c
            pts += values[c]
        state.won[winner] |= mask
        state.tricks[winner] += 1
        done = sum(state.tricks)
        if done == TRICKS_PER_DEAL:
            pts += self.last_trick_value[k]
        state.points[winner] += pts
        state.scores[winner] += pts
        state.last_trick = (state.leader, tuple(trick), winner)
        state.trick = []
        state.lead_suit = -1
        state.leader = state.to_play = winner  # the trick winner leads the next trick
        if done == TRICKS_PER_DEAL:
            self._end_deal(state)
        elif self.early_end and self.penalty_cards[k]:
            taken = 0
            for w in state.won:
                taken |= w
            if not self.penalty_cards[k] & ~taken:
                self._end_deal(state)

    # --- the Domino deal (Unteranlegen) -----------------------------------------------
    def legal_bits(self, state: State) -> int:
        """`legal_actions` as a bitmask (bit ``a`` for action ``a``), for the adapter's
        action mask."""
        if state.phase == Phase.TRICKS:
            return self.legal_mask(state)
        if state.phase == Phase.DOMINO:
            return self._domino_bits(state)
        return 0

    def _domino_actions(self, state: State) -> list[int]:
        """Legal Domino actions: an opening Jack (its card id), ``N + c`` to lay ``c``
        at the top end, ``2N + c`` at the bottom end, or ``PASS`` when nothing fits."""
        return cards_in(self._domino_bits(state))

    def _domino_bits(self, state: State) -> int:
        """`_domino_actions` as a bitmask over the action ids."""
        hand = state.hands[state.to_play]
        N, R = self.N, self.num_ranks
        if self.per_suit and not state.laid:
            return 1 << self.jack_of_hearts  # its holder opens with the Jack of hearts
        opening = top_fit = bottom_fit = 0
        at = self.at
        for ln in range(self.num_lines):
            top = state.line_top[ln]
            if top < 0:
                # "one begins with a Jack": an unopened line takes only a Jack
                opening |= self.line_cards[ln]
                continue
            # "above and below … in rank order. Aces may 'turn the corner'": the cycle
            # position after the top end, and the one before the bottom end.
            top_fit |= at[ln][(top + 1) % R]
            bottom_fit |= at[ln][(state.line_bottom[ln] - 1) % R]
        opening &= hand & self.jacks
        top_fit &= hand
        bottom_fit &= hand
        if not (opening | top_fit | bottom_fit):
            return 1 << self.PASS  # rules-notes §4.3: no legal card, the player passes
        return opening | top_fit << N | bottom_fit << (2 * N)

    def _domino(self, state: State, action: int) -> None:
        legal = self._domino_actions(state)
        if action not in legal:
            raise self.illegal(state, action, self._domino_reason(state, action, legal))
        player = state.to_play
        if action == self.PASS:
            state.passes += 1
            self._next_holder(state, player)
            return
        N = self.N
        card = action % N
        ln = self.line_of[card]
        pos = self.position[card]
        if action < N:
            state.line_top[ln] = state.line_bottom[ln] = pos
        elif action < 2 * N:
            state.line_top[ln] = pos
        else:
            state.line_bottom[ln] = pos
        bit = 1 << card
        state.hands[player] ^= bit
        state.played_by[player] |= bit
        state.laid |= bit
        state.passes = 0
        if not state.hands[player]:
            # "Whoever is first to meld all his or her cards is not penalised … the
            # second to go out gets 10 minus points, the third 20 and the fourth 30."
            self._go_out(state, player)
            holders = [p for p in range(self.num_players) if state.hands[p]]
            if len(holders) == 1:
                # rules-notes §4.3: the deal ends when one player still holds cards; he
                # is last.
                self._go_out(state, holders[0])
                self._end_deal(state)
                return
        self._next_holder(state, player)

    def _go_out(self, state: State, player: int) -> None:
        pts = DOMINO_STEP * len(state.out_order)
        state.out_order.append(player)
        state.points[player] += pts
        state.scores[player] += pts

    def _next_holder(self, state: State, player: int) -> None:
        n = self.num_players
        p = (player + 1) % n
        while not state.hands[p]:  # players who went out are skipped
            p = (p + 1) % n
        state.to_play = p

    def _domino_reason(self, state: State, action: int, legal: list[int]) -> str:
        if legal == [self.PASS]:
            return "no card of yours fits the layout, so you must pass"
        if action == self.PASS:
            return "laying is compulsory when a card fits"
        if not 0 <= action < self.PASS:
            return "not an action of this game"
        card = action % self.N
        if not (state.hands[state.to_play] >> card) & 1:
            return f"player_{state.to_play} does not hold that card"
        if action < self.N:
            return "only a Jack opens a line, and only while its line is not opened"
        return "that card does not fit at that end"

    # --- end of a deal and of the partie ----------------------------------------------
    def _end_deal(self, state: State) -> None:
        state.history.append((state.contract, tuple(state.points)))
        state.deal_no += 1
        if state.deal_no == len(self.contracts):
            state.phase = Phase.OVER
            state.to_play = -1
            return
        # rules-notes §4.3: "the deal passes clockwise each deal"
        state.dealer = (state.dealer + 1) % self.num_players
        state.phase = Phase.DEAL
        state.dealt = 0
        state.dealt_count = 0
        state.hands = [0] * self.num_players
        state.to_play = -1

    def returns(self, state: State) -> list[float]:
        """Each seat's partie total so far: every deal's points count as they are
        scored."""
        return [float(s) for s in state.scores]

    def utility_bounds(self) -> tuple[float, float]:
        return float(self.score_low), float(self.score_high)

    def rule_tables(self) -> dict[str, Any]:
        """The contracts in the partie's order, the card orders, each contract's card
        and trick values and the Domino lines (`Game.rule_tables`)."""
        return {
            **super().rule_tables(),
            "contracts": list(CONTRACTS),
            "episode_contracts": list(self.contracts),
            "game_order": list(GAME_ORDER_LOW_FIRST),
            "natural_order": list(NATURAL_ORDER_LOW_FIRST),
            "strength": list(self.strength),
            "heart_penalty": HEART_PENALTY,
            "card_value": self.card_value,
            "trick_value": self.trick_value,
            "last_trick_value": self.last_trick_value,
            "deal_totals": DEAL_TOTALS,
            "domino_step": DOMINO_STEP,
            "domino_lines": {"line_of": list(self.line_of), "at": self.at},
            "hand_size": HAND_SIZE,
        }

    def winners(self, state: State) -> list[int]:
        """The seats with the highest total ("The winner is the one who has the highest
        score"); rules-notes §4.3: equal totals share the win."""
        best = max(state.scores)
        return [p for p in range(self.num_players) if state.scores[p] == best]

    def info(self, state: State) -> dict[str, Any]:
        out: dict[str, Any] = {
            "contract": CONTRACTS[state.contract] if state.contract >= 0 else None,
            "deal": state.deal_no,
            "dealer": state.dealer,
            "scores": tuple(state.scores),
            "points": tuple(state.points),
            "tricks": tuple(state.tricks),
        }
        if state.contract == DOMINO:
            out["out_order"] = tuple(state.out_order)
        if state.phase == Phase.OVER:
            out["winners"] = tuple(self.winners(state))
        return out

    # --- invariants -------------------------------------------------------------------
    def check_invariants(self, state: State) -> None:
        """Cards conserved, points equal to what the won cards and tricks are worth, and
        each finished deal's points summing to the rules-notes total for its
        contract."""
        n = self.num_players
        all_hands = played = 0
        for p in range(n):
            assert not all_hands & state.hands[p], "a card is in two hands"
            assert not played & state.played_by[p], "a card was played twice"
            all_hands |= state.hands[p]
            played |= state.played_by[p]
        assert not all_hands & played, "a played card is still in a hand"
        in_deal = state.phase in (Phase.TRICKS, Phase.DOMINO)
        if state.phase == Phase.DEAL:
            assert all_hands == state.dealt
        elif state.phase != Phase.CHOOSE_DEALER:
            assert all_hands | played == self.deck.all_mask, "cards lost"
        totals = [0] * n
        for k, pts in state.history:
            assert sum(pts) == DEAL_TOTALS[n][k], (
                f"{CONTRACTS[k]} distributed {sum(pts)}, expected {DEAL_TOTALS[n][k]}"
            )
            for p in range(n):
                totals[p] += pts[p]
        if in_deal:
            for p in range(n):
                totals[p] += state.points[p]
        assert totals == state.scores, f"scores {state.scores} != deal points {totals}"
        if state.phase == Phase.TRICKS:
            trick_mask = mask_of(state.trick)
            won = 0
            for p in range(n):
                assert not won & state.won[p]
                won |= state.won[p]
            assert won == played & ~trick_mask, "won cards differ from finished tricks"
            assert won.bit_count() == n * sum(state.tricks)
            assert len(state.trick) < n
            in_trick = {(state.leader + i) % n for i in range(len(state.trick))}
            for p in range(n):
                left = HAND_SIZE - sum(state.tricks) - (p in in_trick)
                assert state.hands[p].bit_count() == left, (
                    f"player_{p} has a wrong card count"
                )
            k = state.contract
            for p in range(n):
                expect = sum(self.card_value[k][c] for c in cards_in(state.won[p]))
                expect += self.trick_value[k] * state.tricks[p]
                assert expect == state.points[p], f"points of player_{p} do not add up"
        elif state.phase == Phase.DOMINO:
            assert state.laid == played
            assert state.passes < n - len(state.out_order), "the Domino layout blocked"
            for ln in range(self.num_lines):
                on_line = state.laid & self.line_cards[ln]
                if state.line_top[ln] < 0:
                    assert not on_line
                    continue
                span = (state.line_top[ln] - state.line_bottom[ln]) % self.num_ranks + 1
                assert (on_line.bit_count() - span) % self.num_ranks == 0, "broken line"
            assert len(set(state.out_order)) == len(state.out_order)
            for p in range(n):
                if p in state.out_order:
                    assert not state.hands[p], "a player who went out still holds cards"
                    assert state.points[p] == DOMINO_STEP * state.out_order.index(p)
                else:
                    assert state.hands[p] and state.points[p] == 0

    # --- names, observation, rendering ------------------------------------------------
    def action_name(self, action: int) -> str:
        N = self.N
        if not isinstance(action, int | np.integer) or not 0 <= action <= self.PASS:
            raise ValueError(f"action {action!r} is out of range 0..{self.PASS}")
        if action == self.PASS:
            return "pass"
        name = self.deck.format(int(action) % N)
        if action < N:
            return name
        return name + ("@top" if action < 2 * N else "@bottom")

    def action_id(self, name: str) -> int:
        if not isinstance(name, str):
            raise ValueError(f"action name must be a string, got {name!r}")
        text = name.strip().lower()
        if text == "pass":
            return self.PASS
        card, at, end = text.partition("@")
        c = self.deck.card(card)
        if not at:
            return c
        if end == "top":
            return self.N + c
        if end == "bottom":
            return 2 * self.N + c
        raise ValueError(
            f"unknown action {name!r}: a card ('QS'), a card at an end ('QS@top', "
            "'QS@bottom') or 'pass'"
        )

    def observe(self, state: State, player: int) -> np.ndarray:
        return observation.encode(self, state, player)

    def render(self, state: State, viewer: int | None = None) -> str:
        return observation.render(self, state, viewer)

    def forced_chance(self, options: Mapping[str, Any]) -> list[int | None]:
        """Chance outcomes for ``{"dealer": d}`` and/or ``{"deal": …}`` / ``{"deals":
        [...]}``.

        A deal is ``{"dealer": d, "hands": [[8 names] × n]}``; later deals of a partie
        have their dealer fixed by the rotation and may leave it out. Errors name the
        deal (``deal``, ``deals[1]``). Deals of a partie after the forced ones are
        random (a `LaterDealsRandomWarning` says so, once per env).
        """
        n = len(self.contracts)
        return forced_deals(
            self, options, self._deal_cards, most=n, total=n, episode="partie"
        )

    def _deal_cards(self, deal: Mapping, where: str, dealer: int | None) -> list[int]:
        """A forced deal's cards in dealing order: each hand in turn, seat 0 first."""
        hands = parse_hands(self.deck, deal, self.num_players, HAND_SIZE, where)
        check_partition(self.deck, hands, where)
        return [c for hand in hands for c in hand]


__all__ = ["CONTRACTS", "Herzeln", "Phase", "State"]
