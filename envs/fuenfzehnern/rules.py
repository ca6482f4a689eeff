"""Fünfzehnern: the rules engine.

Implements the rule book (*How to Play Fünfzehnern*) with the gaps resolved as in
the rules notes §3; ``docs/games/fuenfzehnern.md`` lists every rule with the
sentence it rests on. Plain Python, no RNG: the first dealer and the deal are chance
outcomes (the dealer, then the cards to seats 0, 1, …, n-1, 0, 1, …), so tests and
``reset(options={"deal": …})`` can force any deal.

Card ids are those of the 32-card German pack (`GERMAN_32`: suits S H D C = Laub, Herz,
Schellen, Eichel; ranks A K Q J 10 9 8 7 = Daus, König, Ober, Unter, …) in both sizes,
so an id inside a suit grows as the rank falls: the lowest id of a suit in a set is its
highest card. With three players the removed suit's ids simply never occur.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..core.cards import GERMAN_32, SUITS, cards_in, held_bit, parse_suit
from ..core.deal import forced_deals, parse_hands
from ..core.engine import CHANCE, TERMINAL, Game, check_choice
from . import observation
from .state import Phase, State

DECK = GERMAN_32
# "each player having eight total cards" (three players: 24 cards, 8 each)
HAND_SIZE = 8
BASELINE = 15  # "For each card point a player managed to capture over 15 …"
# tying option: "+15 each … the two players who won no tricks … lose 15"
TYING_POINTS = 15
NUM_CARDS = 32
ZWANG = NUM_CARDS  # action ZWANG + s: lead the Ober of suit s announcing "Zwang"
NUM_ACTIONS = NUM_CARDS + 4

# "Ace 5, King 4, Queen 3, Jack 2, 10 1, 7 8 9 0", by rank index (A K Q J 10 9 8 7).
RANK_POINTS = (5, 4, 3, 2, 1, 0, 0, 0)
CARD_POINTS = tuple(RANK_POINTS[DECK.rank[c]] for c in range(NUM_CARDS))
SUIT_MASK = tuple(0xFF << (8 * s) for s in range(4))
ACE, KING, OBER = 0, 1, 2  # offsets inside a suit

LEAD_RULES = ("strict", "relaxed")
EPISODES = ("deal", "match")
PLAYERS = (4, 3)


class Fuenfzehnern(Game[State]):
    """Fünfzehnern for 4 (seed) or 3 players.

    Options:
        players: 4, or 3 ("A rare three-player variant": one whole suit removed).
        removed_suit: the suit taken out with 3 players, ``"S" "H" "D" "C"``
            (default ``"C"``, the last suit; the seed: "The choice of which suit to
            remove is irrelevant").
        lead_rules: ``"strict"`` (the seed's main rules, default) or ``"relaxed"``
            (the seed's "Relaxed Rule set"); rules-notes §6 calls it ``rules``.
        unbeatable_duty_on_first_suit: strict rules only; True (default, rules-notes
            [ENGINE CHOICE]) puts the unbeatable-card duty on every required suit,
            False only on the fall-back suits of the chain. Leave it unset with
            relaxed rules.
        tying_scoring: the seed's optional "Modified Scoring for Tying players"
            (default False; 4 players only); rules-notes §6 calls it ``tying_rule``.
        episode: ``"deal"`` (one deal, default) or ``"match"`` (a session of
            ``num_hands`` deals, the deal passing clockwise).
        num_hands: deals in a match (default: the number of players, so everyone
            deals once).
    """

    reset_option_keys = frozenset({"dealer"})

    def __init__(
        self,
        players: int = 4,
        removed_suit: str | None = None,
        lead_rules: str = "strict",
        unbeatable_duty_on_first_suit: bool | None = None,
        tying_scoring: bool = False,
        episode: str = "deal",
        num_hands: int | None = None,
    ):
        if isinstance(players, bool):
            raise ValueError(f"players must be one of {list(PLAYERS)}, got {players!r}")
        self.num_players = n = check_choice("players", players, PLAYERS)
        if n == 4:
            if removed_suit is not None:
                raise ValueError(
                    "removed_suit is only for players=3 "
                    "(the four-player game uses all 32 cards)"
                )
            self.removed_suit = -1
        else:
            self.removed_suit = parse_suit(
                "C" if removed_suit is None else str(removed_suit)
            )
        self.in_play = (1 << NUM_CARDS) - 1
        if self.removed_suit >= 0:
            self.in_play &= ~SUIT_MASK[self.removed_suit]
        self.total_points = sum(CARD_POINTS[c] for c in cards_in(self.in_play))
        assert self.total_points == BASELINE * n  # 60 or 45: game points are zero-sum

        self.lead_rules = check_choice("lead_rules", lead_rules, LEAD_RULES)
        self.strict = lead_rules == "strict"
        if unbeatable_duty_on_first_suit is None:
            unbeatable_duty_on_first_suit = True
        elif not self.strict:
            raise ValueError(
                "unbeatable_duty_on_first_suit applies to lead_rules='strict' only "
                "(the relaxed rules have no unbeatable-card duty); leave it unset"
            )
        if not isinstance(unbeatable_duty_on_first_suit, bool):
            raise ValueError(
                "unbeatable_duty_on_first_suit must be True or False, got "
                f"{unbeatable_duty_on_first_suit!r}"
            )
        self.duty_on_first = unbeatable_duty_on_first_suit
        if not isinstance(tying_scoring, bool):
            raise ValueError(
                f"tying_scoring must be True or False, got {tying_scoring!r}"
            )
        if tying_scoring and n != 4:
            raise ValueError(
                "tying_scoring needs players=4: with 3 players +15, +15, -15 is not "
                "zero-sum (rules-notes §3)"
            )
        self.tying_scoring = tying_scoring
        self.episode = check_choice("episode", episode, EPISODES)
        if episode == "deal":
            if num_hands not in (None, 1) or isinstance(num_hands, bool):
                raise ValueError(
                    f"num_hands={num_hands!r} needs episode='match' "
                    "(a 'deal' episode is one deal)"
                )
            num_hands = 1
        elif num_hands is None:
            num_hands = n  # rules-notes [ENGINE CHOICE]: everyone deals once
        if (
            isinstance(num_hands, bool)
            or not isinstance(num_hands, int)
            or num_hands < 1
        ):
            raise ValueError(f"num_hands must be a positive integer, got {num_hands!r}")
        self.num_hands = num_hands

        # The observation's constant bits: removed suit (4), then the option flags.
        self.option_bits = (
            (1 << self.removed_suit if self.removed_suit >= 0 else 0)
            | (not self.strict) << 4
            | (self.strict and self.duty_on_first) << 5
            | tying_scoring << 6
            | (episode == "match") << 7
        )
        self.name = "fuenfzehnern_v0"
        self.num_actions = NUM_ACTIONS
        self.deck = DECK
        self.observation_size = observation.size(n)

    def __repr__(self) -> str:
        extra = (
            f", removed_suit={SUITS[self.removed_suit]!r}"
            if self.removed_suit >= 0
            else ""
        )
        return (
            f"Fuenfzehnern(players={self.num_players}{extra}, "
            f"lead_rules={self.lead_rules!r}, episode={self.episode!r}, "
            f"num_hands={self.num_hands})"
        )

    # --- chance: who deals, and the deal ----------------------------------------------
    def new_state(self) -> State:
        return State(self.num_players)

    def current_player(self, state: State) -> int:
        if state.phase == Phase.PLAY:
            return state.to_play
        if state.phase == Phase.OVER:
            return TERMINAL
        return CHANCE

    def _undealt(self, state: State) -> int:
        dealt = 0
        for h in state.hands:
            dealt |= h
        return self.in_play & ~dealt

    def chance_outcomes(self, state: State) -> list[tuple[int, float]]:
        if state.phase == Phase.CHOOSE_DEALER:
            n = self.num_players
            return [(d, 1.0 / n) for d in range(n)]
        if state.phase == Phase.DEAL:
            left = cards_in(self._undealt(state))
            return [(c, 1.0 / len(left)) for c in left]
        raise ValueError("not a chance node")

    def sample_chance(self, state: State, rng: np.random.Generator) -> list[int]:
        if state.phase == Phase.DEAL:
            # The rest of the shuffle at once: the distribution of card-by-card draws.
            left = cards_in(self._undealt(state))
            return [left[i] for i in rng.permutation(len(left)).tolist()]
        return super().sample_chance(state, rng)

    def apply(self, state: State, action: int) -> None:
        if state.phase == Phase.PLAY:
            if ZWANG <= action < NUM_ACTIONS:
                self._zwang(state, action - ZWANG)
            else:
                self._play(state, action, -1)
        elif state.phase == Phase.DEAL:
            self._deal_card(state, action)
        elif state.phase == Phase.CHOOSE_DEALER:
            if not 0 <= action < self.num_players:
                raise self.illegal(
                    state, action, f"the dealer is a seat 0..{self.num_players - 1}"
                )
            state.dealer = action
            state.phase = Phase.DEAL
        else:
            raise self.illegal(state, action, "the game is over")

    def _deal_card(self, state: State, card: int) -> None:
        if not 0 <= card < NUM_CARDS or not (1 << card) & self._undealt(state):
            raise self.illegal(state, card, "that card is not left in the pack")
        # "dealing the cards … one card at a time" until "each player having eight total
        # cards". Seat k mod n gets the k-th card: which seat is served first does not
        # change the distribution, and it lets a forced deal fix the cards without
        # knowing the dealer.
        state.hands[state.dealt % self.num_players] |= 1 << card
        state.dealt += 1
        if state.dealt == HAND_SIZE * self.num_players:
            # "The player to the immediate left of the dealer leads the first card"
            state.leader = state.to_play = (state.dealer + 1) % self.num_players
            state.phase = Phase.PLAY

    # --- leading ----------------------------------------------------------------------
    def lead_mask(self, state: State, hand: int) -> int:
        """The cards of ``hand`` that may be led now (bitmask), by the lead rules."""
        chain = state.chain
        if not chain:
            # "On this first trick of the hand this player may lead using any card from
            # his hand. And as long as this player retains the lead … any card of
            # choice"
            return hand
        others = self.in_play & ~state.played & ~hand  # unplayed cards in other hands
        if not self.strict:
            # Relaxed: "he still must lead a card of the same suit on which the trick
            # was won … if he does not have such a card, … may simply play any other
            # card". And "if the leader has unbeatable cards … he may opt to play those
            # first".
            held = hand & SUIT_MASK[chain[-1]]
            if not held:
                return hand
            return held | self.unbeatable(hand, others)
        # Strict: "must lead … the same suit as that which the player was able to
        # capture the lead", else "the suit that was led previous to the current winning
        # suit", and so on back through "all the suits that the former players had won
        # tricks in".
        top = chain[-1]
        tried = 0
        for i in range(len(chain) - 1, -1, -1):
            s = chain[i]
            if tried >> s & 1:
                continue
            tried |= 1 << s
            held = hand & SUIT_MASK[s]
            if held:
                # "the player must also play an unbeatable card in this suit (if he has
                # such a card)"; the first capture suit too unless
                # unbeatable_duty_on_first_suit=False.
                if s == top and not self.duty_on_first:
                    return held
                return self.unbeatable(held, others) or held
        # "If a player has exhausted all the suits that the former players had won
        # tricks in, they may then play a card of any suit still remaining in their
        # hand."
        return hand

    @staticmethod
    def unbeatable(cards: int, others: int) -> int:
        """The cards in ``cards`` that no card in ``others`` (the unplayed cards the
        other players hold) can beat: every higher card of their suit is played or in
        ``cards``'s owner's hand. rules-notes §3: "any of the highest unplayed card(s)"
        of the suit."""
        out = 0
        for s in range(4):
            held = cards & SUIT_MASK[s]
            if held:
                rivals = others & SUIT_MASK[s]
                # The lowest id among the rivals is their best card; ids below it in the
                # suit are the cards above it.
                out |= held & ((rivals & -rivals) - 1) if rivals else held
        return out

    def required_suit(self, state: State, hand: int) -> int:
        """The suit a leader holding ``hand`` must lead now, or -1 if free."""
        chain = state.chain
        if not chain:
            return -1
        if not self.strict:
            return chain[-1] if hand & SUIT_MASK[chain[-1]] else -1
        for s in reversed(chain):
            if hand & SUIT_MASK[s]:
                return s
        return -1

    def zwang_suits(self, state: State, lead: int, hand: int) -> int:
        """Suits (bits) in which Zwang may be announced: "having both the King and Queen
        of the same suit, and is legally able to lead that suit, may lead the Queen and
        announce 'Zwang'" (rules-notes: the Ober must be a legal lead and the King in
        hand)."""
        out = 0
        for s in range(4):
            base = 8 * s
            if lead >> (base + OBER) & 1 and hand >> (base + KING) & 1:
                out |= 1 << s
        return out

    # --- play -------------------------------------------------------------------------
    def legal_mask(self, state: State) -> int:
        """The cards the player to act may play, as a bitmask."""
        hand = state.hands[state.to_play]
        if not state.trick:
            return self.lead_mask(state, hand)
        if state.zwang >= 0:
            # "The player who has the Ace of that same suit must play it"
            ace = 1 << (8 * state.zwang + ACE)
            if hand & ace:
                return ace
        # "must play a card of the suit originally led … If a player has no cards in the
        # suit originally led to the trick, the player may play a card from any suit"
        follow = hand & SUIT_MASK[state.led_suit]
        return follow or hand

    def legal_actions(self, state: State) -> list[int]:
        if state.phase != Phase.PLAY:
            return []
        mask = self.legal_mask(state)
        out = cards_in(mask)
        if not state.trick:
            zw = self.zwang_suits(state, mask, state.hands[state.to_play])
            while zw:
                low = zw & -zw
                out.append(ZWANG + low.bit_length() - 1)
                zw ^= low
        return out

    def legal_bits(self, state: State) -> int:
        """`legal_actions` as a bitmask (bit ``a`` for action ``a``), for the adapter's
        action mask."""
        if state.phase != Phase.PLAY:
            return 0
        mask = self.legal_mask(state)
        if not state.trick:
            mask |= self.zwang_suits(state, mask, state.hands[state.to_play]) << ZWANG
        return mask

    def _zwang(self, state: State, suit: int) -> None:
        if state.trick:
            raise self.illegal(state, ZWANG + suit, "Zwang is announced when leading")
        hand = state.hands[state.to_play]
        if not self.zwang_suits(state, self.lead_mask(state, hand), hand) >> suit & 1:
            raise self.illegal(
                state,
                ZWANG + suit,
                "Zwang needs the King and the Ober of the suit and the Ober as a legal "
                "lead",
            )
        self._play(state, 8 * suit + OBER, suit)

    def _play(self, state: State, card: int, zwang: int) -> None:
        player = state.to_play
        bit = held_bit(self, state, card, NUM_CARDS)
        if not bit & self.legal_mask(state):
            if state.trick:
                why = (
                    "the Zwang forces the Ace"
                    if state.zwang >= 0
                    else "you must follow suit"
                )
            else:
                why = self._lead_reason(state)
            raise self.illegal(state, card, why)
        n = self.num_players
        state.hands[player] ^= bit
        state.played |= bit
        state.played_by[player] |= bit
        suit = card >> 3
        trick = state.trick
        if not trick:
            state.led_suit = suit
            if zwang >= 0:
                state.zwang = zwang
                state.zwang_suits |= 1 << zwang
        elif suit != state.led_suit:
            state.voids[player] |= 1 << state.led_suit
        trick.append(card)
        if len(trick) < n:
            state.to_play = (player + 1) % n
            return
        # "the trick won by the highest card played to it in the suit originally led";
        # ids of a suit grow as the rank falls, so the best card is the smallest id of
        # the led suit.
        led = state.led_suit
        best = min(c for c in trick if c >> 3 == led)
        leader = state.leader
        winner = (leader + trick.index(best)) % n
        state.points[winner] += sum(CARD_POINTS[c] for c in trick)
        state.tricks[winner] += 1
        if winner != leader:
            # A capture: the winner took the lead in the led suit (the suit of his
            # winning card). A leader who wins his own lead stays bound exactly as
            # before.
            state.chain.append(led)
        state.last_trick = (leader, tuple(trick), winner)
        state.trick = []
        state.led_suit = -1
        state.zwang = -1
        state.leader = state.to_play = winner  # "The winner of each trick then leads"
        if state.played == self.in_play:
            self._end_deal(state)

    def _lead_reason(self, state: State) -> str:
        hand = state.hands[state.to_play]
        s = self.required_suit(state, hand)
        if s < 0:
            return "not a legal lead"
        chain = " ".join(SUITS[x] for x in state.chain)
        if self.strict:
            return (
                f"the lead must be {SUITS[s]}, the latest capture suit you hold "
                f"(capture chain {chain}), and an unbeatable card of it if you have one"
            )
        return f"the lead must be {SUITS[s]} (the capture suit) or an unbeatable card"

    # --- scoring ----------------------------------------------------------------------
    def deal_result(self, state: State) -> list[int]:
        """Game points of the deal just finished: card points − 15, or tying scores."""
        if self.tying_scoring:
            winners = [p for p in range(self.num_players) if state.tricks[p]]
            if len(winners) == 2:
                # "each of these two players was awarded 15 Game Points, and the two
                # players who won no tricks during the hand each lose 15 Game Points"
                return [
                    TYING_POINTS if state.tricks[p] else -TYING_POINTS
                    for p in range(self.num_players)
                ]
        # "For each card point a player managed to capture over 15 … earns one game
        # point. For each card point under 15 … loses one Game Point."
        return [pts - BASELINE for pts in state.points]

    def _end_deal(self, state: State) -> None:
        result = self.deal_result(state)
        state.deal_scores.append(result)
        for p in range(self.num_players):
            state.scores[p] += result[p]
        state.deal_no += 1
        if state.deal_no >= self.num_hands:
            state.phase = Phase.OVER
            return
        # "thereafter the deal of each hand proceeds in a clockwise direction"
        state.dealer = (state.dealer + 1) % self.num_players
        state.new_deal()
        state.phase = Phase.DEAL

    def returns(self, state: State) -> list[float]:
        """Each seat's game points over the finished deals (paid as deals end)."""
        return [float(x) for x in state.scores]

    def utility_bounds(self) -> tuple[float, float]:
        # A deal pays card points - 15 (or +-15 when tying scoring applies).
        per_deal = max(self.total_points - 15, 15)
        return -15.0 * self.num_hands, float(per_deal * self.num_hands)

    def rule_tables(self) -> dict[str, Any]:
        """The pack, the card points, the cards in play and the scoring constants
        (`Game.rule_tables`)."""
        return {
            **super().rule_tables(),
            "rank_points": list(RANK_POINTS),
            "card_points": list(CARD_POINTS),
            "in_play": self.in_play,
            "total_points": self.total_points,
            "baseline": BASELINE,
            "tying_points": TYING_POINTS,
            "hand_size": HAND_SIZE,
            "zwang_offsets": {"ace": ACE, "king": KING, "ober": OBER},
        }

    # --- invariants -------------------------------------------------------------------
    @property
    def max_game_length(self) -> int:
        """The number of decisions in one episode (every deal plays all its cards)."""
        return HAND_SIZE * self.num_players * self.num_hands

    def check_invariants(self, state: State) -> None:
        """Cards conserved, hand sizes and tricks consistent, points and scores adding
        up; AssertionError saying which one fails."""

        def require(ok: bool, what: str) -> None:
            if not ok:
                raise AssertionError(f"{self!r} (phase {state.phase.name}): {what}")

        n = self.num_players
        fmt = DECK.format_mask
        require(
            len(state.deal_scores) == state.deal_no <= self.num_hands,
            f"{len(state.deal_scores)} deal results after {state.deal_no} deals",
        )
        for d, res in enumerate(state.deal_scores):
            require(sum(res) == 0, f"deal {d} scores {res} are not zero-sum")
        require(
            state.scores == [sum(r[p] for r in state.deal_scores) for p in range(n)],
            f"scores {state.scores} differ from the deal results {state.deal_scores}",
        )
        hands_union = 0
        for p, h in enumerate(state.hands):
            require(
                h & ~self.in_play == 0, f"player_{p} holds cards out of play: {fmt(h)}"
            )
            require(hands_union & h == 0, f"player_{p} shares cards with another hand")
            hands_union |= h
        if state.phase in (Phase.CHOOSE_DEALER, Phase.DEAL):
            require(
                state.played == 0 and not state.trick and not state.chain,
                "play before the deal is complete",
            )
            require(
                hands_union.bit_count() == state.dealt,
                "hands differ from the cards dealt",
            )
            sizes = [h.bit_count() for h in state.hands]
            require(max(sizes) - min(sizes) <= 1, f"uneven dealing {sizes}")
            return
        require(state.dealt == HAND_SIZE * n, f"{state.dealt} cards dealt")
        require(hands_union & state.played == 0, "a played card is still in a hand")
        require(
            hands_union | state.played == self.in_play,
            f"cards not conserved: hands {' / '.join(fmt(h) for h in state.hands)}; "
            f"played {fmt(state.played)}",
        )
        by = 0
        for p, b in enumerate(state.played_by):
            require(by & b == 0, f"player_{p}'s played cards overlap another seat's")
            by |= b
        require(by == state.played, "played_by does not add up to the played cards")
        done = sum(state.tricks)
        require(
            done * n + len(state.trick) == state.played.bit_count(),
            f"{state.played.bit_count()} cards played in {done} tricks + "
            f"{len(state.trick)} on the table",
        )
        on_table = 0
        for c in state.trick:
            on_table |= 1 << c
        taken = state.played & ~on_table
        require(
            sum(state.points) == sum(CARD_POINTS[c] for c in cards_in(taken)),
            f"card points {state.points} differ from the cards taken in tricks",
        )
        require(len(state.chain) <= done, "more captures than tricks")
        require(
            all(0 <= s < 4 and s != self.removed_suit for s in state.chain),
            f"bad capture chain {state.chain}",
        )
        for p in range(n):
            # A seat that has played in the current trick holds one card fewer.
            in_trick = (p - state.leader) % n < len(state.trick)
            size = HAND_SIZE - done - in_trick
            require(
                state.hands[p].bit_count() == size,
                f"player_{p} holds {state.hands[p].bit_count()} cards, expected {size}",
            )
            for s in range(4):
                if state.voids[p] >> s & 1:
                    require(
                        state.hands[p] & SUIT_MASK[s] == 0,
                        f"player_{p} is marked void in {SUITS[s]} but holds some",
                    )
        if state.trick:
            require(
                state.led_suit == state.trick[0] >> 3, "led suit differs from the lead"
            )
            require(
                state.to_play == (state.leader + len(state.trick)) % n,
                "turn order broken",
            )
        else:
            require(state.led_suit == -1 and state.zwang == -1, "leftover trick fields")
        if state.zwang >= 0:
            require(
                state.trick[0] == 8 * state.zwang + OBER, "Zwang led without the Ober"
            )
        if state.phase == Phase.PLAY:
            require(state.trick or state.to_play == state.leader, "leader not to play")
            if done == 0:
                require(
                    state.leader == (state.dealer + 1) % n, "eldest does not lead first"
                )
                require(not state.chain, "capture chain before any trick")
            return
        require(
            state.deal_no == self.num_hands and state.played == self.in_play,
            "game over before every deal was played out",
        )
        require(
            state.scores == [sum(r[p] for r in state.deal_scores) for p in range(n)],
            "final scores",
        )
        require(state.deal_scores[-1] == self.deal_result(state), "last deal misscored")

    # --- names, observation, rendering, info ------------------------------------------
    def action_name(self, action: int) -> str:
        if 0 <= action < NUM_CARDS:
            return DECK.format(action)
        if ZWANG <= action < NUM_ACTIONS:
            return "zwang:" + DECK.format(8 * (action - ZWANG) + OBER)
        raise ValueError(f"action id {action} is out of range 0..{NUM_ACTIONS - 1}")

    def action_id(self, name: str) -> int:
        if not isinstance(name, str):
            raise ValueError(f"action name must be a string, got {name!r}")
        text = name.strip()
        if text.lower().startswith("zwang:"):
            card = DECK.card(text[6:])
            if DECK.rank[card] != OBER:
                raise ValueError(
                    f"{name!r}: Zwang is announced by leading an Ober (Q), "
                    "e.g. 'zwang:QS'"
                )
            return ZWANG + DECK.suit[card]
        return DECK.card(text)

    def observe(self, state: State, player: int) -> np.ndarray:
        return observation.encode(self, state, player)

    def render(self, state: State, viewer: int | None = None) -> str:
        return observation.render(self, state, viewer)

    def info(self, state: State) -> dict[str, Any]:
        return {
            "deal": state.deal_no,
            "dealer": state.dealer,
            "capture_chain": "".join(SUITS[s] for s in state.chain),
            "card_points": tuple(state.points),
            "tricks": tuple(state.tricks),
            "scores": tuple(state.scores),
            "last_deal_scores": tuple(state.deal_scores[-1])
            if state.deal_scores
            else None,
            "zwang": SUITS[state.zwang] if state.zwang >= 0 else None,
        }

    # --- forced deals -----------------------------------------------------------------
    def forced_chance(self, options: Mapping[str, Any]) -> list[int | None]:
        """Chance outcomes for ``{"dealer": d}`` and/or ``{"deal": …}`` / ``{"deals":
        [...]}``.

        A deal is ``{"dealer": d, "hands": [[8 names] × players]}``; in a match the
        dealer of later deals follows the clockwise rotation and may be left out.
        Errors name the deal (``deal``, ``deals[1]``). Deals of a match after the
        forced ones are random (a `LaterDealsRandomWarning` says so, once per env).
        """
        n = self.num_hands
        return forced_deals(self, options, self._deal_cards, most=n, total=n)

    def _deal_cards(self, deal: Mapping, where: str, dealer: int | None) -> list[int]:
        """A forced deal's cards in dealing order: one card to each seat in turn."""
        n = self.num_players
        hands = parse_hands(DECK, deal, n, HAND_SIZE, where)
        self._check_deal(hands, where)
        return [hands[k % n][k // n] for k in range(HAND_SIZE * n)]

    def _check_deal(self, hands: list[list[int]], where: str) -> None:
        seen = 0
        dupes = []
        for hand in hands:
            for c in hand:
                if seen >> c & 1:
                    dupes.append(DECK.format(c))
                seen |= 1 << c
        if dupes:
            raise ValueError(
                f"{where}: card(s) dealt twice: {' '.join(sorted(set(dupes)))}"
            )
        out = seen & ~self.in_play
        if out:
            raise ValueError(
                f"{where}: {DECK.format_mask(out)} not in the 24-card pack "
                f"(suit {SUITS[self.removed_suit]} is removed with 3 players)"
            )
        missing = self.in_play & ~seen
        if missing:
            raise ValueError(
                f"{where}: card(s) missing from the deal: {DECK.format_mask(missing)}"
            )


__all__ = ["Fuenfzehnern", "Phase", "State"]
