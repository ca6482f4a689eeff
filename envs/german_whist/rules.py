"""German Whist and Honeymoon Whist: the rules engine.

Implements the rule book *German Whist* (a rules summary) with the gaps resolved as in
the rules notes §2; ``docs/games/german_whist.md`` lists every rule with the
sentence it rests on. Plain Python, no RNG: the deal is a sequence of chance outcomes
(first dealer, then the cards in the order hand 0, hand 1, stock from the top), so tests
and ``reset(options={"deal": …})`` can force any deal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..core.cards import FRENCH_52, FRENCH_54, cards_in, held_bit, mask_of
from ..core.deal import check_partition, forced_deals, parse_cards, parse_hands
from ..core.engine import (
    CHANCE,
    TERMINAL,
    Game,
    check_choice,
    check_inert,
)
from . import observation
from .state import Phase, State

HAND_SIZE = 13
STAGE2_TRICKS = 13
TRICKS_TO_WIN = 7  # "Whoever takes 7 or more of the 13 tricks in stage 2 wins the game"
SPADES = 0
MATCH_TARGET = 14  # Honeymoon: "the first player to 14 match points wins"

VARIANTS = ("german", "honeymoon")
EPISODES = ("deal", "match")


class GermanWhist(Game[State]):
    """German Whist (``variant="german"``) or Honeymoon Whist (``variant="honeymoon"``).

    Options:
        variant: ``"german"`` (seed, 52 cards, one deal) or ``"honeymoon"``
            (Jonny Groves).
        episode: ``"deal"`` or ``"match"``; Honeymoon only, default ``"match"``
            (deals with alternating dealer until a player has ``match_target`` match
            points). German Whist is one deal by the seed, so it only accepts
            ``"deal"``.
        match_target: match points that win a Honeymoon match (seed: 14); with
            ``episode="deal"`` it can change nothing, so any other value raises
            ValueError (`check_inert`).
    """

    reset_option_keys = frozenset({"dealer"})

    def __init__(
        self,
        variant: str = "german",
        episode: str | None = None,
        match_target: int = MATCH_TARGET,
    ):
        self.variant = check_choice("variant", variant, VARIANTS)
        self.honeymoon = variant == "honeymoon"
        if episode is None:
            episode = "match" if self.honeymoon else "deal"
        self.episode = check_choice("episode", episode, EPISODES)
        if not self.honeymoon and episode == "match":
            raise ValueError(
                "episode='match' needs variant='honeymoon': "
                "German Whist is a single deal "
                "(the seed: 'the game is decided as soon as a player has 7 of them')"
            )
        if (
            isinstance(match_target, bool)
            or not isinstance(match_target, int)
            or match_target < 1
        ):
            raise ValueError(
                f"match_target must be a positive integer, got {match_target!r}"
            )
        if self.episode == "deal":
            check_inert(
                "match_target",
                match_target,
                MATCH_TARGET,
                "with episode='deal' (only a Honeymoon match is played to a target)",
            )
        self.match_target = match_target
        self.deck = FRENCH_54 if self.honeymoon else FRENCH_52
        self.stock_size = self.deck.size - 2 * HAND_SIZE  # 26, or 28 with the jokers
        self.jokers = self.deck.suit_mask[4]
        # Highest first: "The High Joker beats the Low Joker, which beats the Ace of
        # trumps."
        self.joker_order = (
            (self.deck.card("JKH"), self.deck.card("JKL")) if self.honeymoon else ()
        )
        self.name = "german_whist_v0"
        self.num_players = 2
        self.num_actions = self.deck.size
        self.observation_size = observation.size(self.deck.size)
        # Card strength inside its suit: higher wins. Jokers: High > Low > ace of
        # trumps.
        self._strength = [13 - r for r in self.deck.rank]
        if self.honeymoon:
            self._strength[self.deck.card("JKH")] = 15
            self._strength[self.deck.card("JKL")] = 14

    def __repr__(self) -> str:
        return f"GermanWhist(variant={self.variant!r}, episode={self.episode!r})"

    # --- chance: who deals, and the deal ----------------------------------------------
    def new_state(self) -> State:
        return State()

    def current_player(self, state: State) -> int:
        if state.phase == Phase.PLAY:
            return state.to_play
        if state.phase == Phase.OVER:
            return TERMINAL
        return CHANCE

    def chance_outcomes(self, state: State) -> list[tuple[int, float]]:
        if state.phase == Phase.CHOOSE_DEALER:
            return [(0, 0.5), (1, 0.5)]
        if state.phase == Phase.DEAL:
            left = [c for c in range(self.deck.size) if c not in set(state.dealt)]
            return [(c, 1.0 / len(left)) for c in left]
        raise ValueError("not a chance node")

    def sample_chance(self, state: State, rng: np.random.Generator) -> list[int]:
        if state.phase == Phase.DEAL:
            # The rest of the shuffle at once: the same distribution as card-by-card
            # draws.
            left = cards_in(self.deck.all_mask & ~mask_of(state.dealt))
            return [left[i] for i in rng.permutation(len(left)).tolist()]
        return super().sample_chance(state, rng)

    def apply(self, state: State, action: int) -> None:
        if state.phase == Phase.PLAY:
            self._play(state, action)
        elif state.phase == Phase.DEAL:
            self._deal_card(state, action)
        elif state.phase == Phase.CHOOSE_DEALER:
            if action not in (0, 1):
                raise self.illegal(state, action, "the dealer is seat 0 or 1")
            state.dealer = action
            state.phase = Phase.DEAL
        else:
            raise self.illegal(state, action, "the game is over")

    def _deal_card(self, state: State, card: int) -> None:
        if not 0 <= card < self.deck.size or card in state.dealt:
            raise self.illegal(state, card, "that card is not left in the pack")
        state.dealt.append(card)
        n = len(state.dealt)
        if n <= HAND_SIZE:
            state.hands[0] |= 1 << card
        elif n <= 2 * HAND_SIZE:
            state.hands[1] |= 1 << card
        else:
            state.stock.append(card)
        if n == self.deck.size:
            self._start_play(state)

    def _start_play(self, state: State) -> None:
        # "turn its top card face up. That card's suit is trumps for the whole deal."
        # Honeymoon: "If a Joker is turned up to set trumps, spades are trumps."
        top = state.stock[0]
        state.trump = SPADES if (1 << top) & self.jokers else self.deck.suit[top]
        state.trump_mask = self.deck.suit_mask[state.trump] | self.jokers
        # "The non-dealer leads the first trick."
        state.leader = state.to_play = 1 - state.dealer
        state.phase = Phase.PLAY

    # --- play -------------------------------------------------------------------------
    def legal_mask(self, state: State) -> int:
        """The legal cards of the player to act, as a bitmask."""
        hand = state.hands[state.to_play]
        if state.lead < 0:
            return hand  # the leader may lead any card
        if self.honeymoon and state.stage == 1:
            return hand  # Honeymoon: "In stage 1 you may play any card."
        # "Follow suit if you can. If you can't, play any card." (Jokers follow as
        # trumps.)
        follow = hand & self._suit_of_mask(state, state.lead)
        return follow or hand

    def legal_actions(self, state: State) -> list[int]:
        if state.phase != Phase.PLAY:
            return []
        return cards_in(self.legal_mask(state))

    def legal_bits(self, state: State) -> int:
        """The legal actions as a bitmask (action ids are card ids): the adapter's fast
        path."""
        return self.legal_mask(state) if state.phase == Phase.PLAY else 0

    def _suit_of_mask(self, state: State, card: int) -> int:
        """All cards of ``card``'s suit for following (a joker belongs to the trump
        suit)."""
        if (1 << card) & state.trump_mask:
            return state.trump_mask
        return self.deck.suit_mask[self.deck.suit[card]]

    def _play(self, state: State, card: int) -> None:
        player = state.to_play
        bit = held_bit(self, state, card, self.deck.size)
        if not bit & self.legal_mask(state):
            raise self.illegal(state, card, "you must follow suit")
        state.hands[player] ^= bit
        state.seen[player] &= ~bit
        state.played |= bit
        if state.lead < 0:
            state.lead = card
            state.to_play = 1 - player
            return
        lead = state.lead
        if not self.honeymoon or state.stage == 2:
            # Failing to follow shows the follower holds no other card of the suit led.
            if not bit & self._suit_of_mask(state, lead):
                suit = (
                    state.trump
                    if (1 << lead) & state.trump_mask
                    else self.deck.suit[lead]
                )
                state.voids[player] |= 1 << suit
        winner = state.leader if self._beats(state, lead, card) else player
        state.last_trick = (lead, card, winner)
        state.lead = -1
        if state.stage == 1:
            self._draw(state, winner)
            state.tricks1[winner] += 1
        else:
            state.tricks2[winner] += 1
        # "The winner of each trick leads the next."
        state.leader = state.to_play = winner
        self._check_end(state, winner)

    def _beats(self, state: State, lead: int, follow: int) -> bool:
        """True when the led card wins against the card that followed it."""
        trumps = state.trump_mask
        if (1 << follow) & trumps:
            if not (1 << lead) & trumps:
                return False  # "unless a trump is played, and then the trump wins"
            return self._strength[lead] > self._strength[follow]
        if (1 << lead) & trumps or self.deck.suit[follow] != self.deck.suit[lead]:
            return True  # an off-suit card that is not a trump cannot win
        return self._strength[lead] > self._strength[follow]

    def _draw(self, state: State, winner: int) -> None:
        # "the winner of each trick must take the face-up card from the stock. The loser
        # takes the next card face down without showing it. Then turn the next card of
        # the stock."
        prize, hidden = state.stock[state.stock_pos], state.stock[state.stock_pos + 1]
        loser = 1 - winner
        state.hands[winner] |= 1 << prize
        state.seen[winner] |= 1 << prize
        state.hands[loser] |= 1 << hidden
        state.voids[loser] = 0  # the hidden card may be of any suit
        state.stock_pos += 2

    def _check_end(self, state: State, winner: int) -> None:
        if not self.honeymoon:
            # "decided as soon as … 7 of them"
            if state.tricks2[winner] >= TRICKS_TO_WIN:
                state.winner = winner
                state.phase = Phase.OVER
            return
        if state.hands[0] or state.hands[1]:
            return
        # Honeymoon: "The player who takes 14 or more of the 27 tricks scores 1 match
        # point for each trick over 13." 27 is odd, so exactly one player scores.
        totals = [state.tricks1[p] + state.tricks2[p] for p in (0, 1)]
        scorer = 0 if totals[0] > totals[1] else 1
        state.match[scorer] += totals[scorer] - 13
        state.deal_no += 1
        if self.episode == "deal" or state.match[scorer] >= self.match_target:
            state.winner = scorer
            state.phase = Phase.OVER
        else:
            self._next_deal(state)

    def _next_deal(self, state: State) -> None:
        # "Play several deals. The deal alternates"
        match, deal_no, dealer = state.match, state.deal_no, state.dealer
        fresh = State()
        for name in State.__slots__:
            setattr(state, name, getattr(fresh, name))
        state.match, state.deal_no = match, deal_no
        state.dealer = 1 - dealer
        state.phase = Phase.DEAL

    # --- invariants (the soak runner checks them after every step) --------------------
    @property
    def max_game_length(self) -> int:
        """An upper bound on the decisions in one episode."""
        if self.episode == "deal":
            return self.deck.size  # every card is played at most once
        # Each deal gives match points to exactly one player, at least one, so somebody
        # reaches the target within 2 * (target - 1) + 1 deals.
        return (2 * self.match_target - 1) * self.deck.size

    def check_invariants(self, state: State) -> None:
        """Cards conserved, Seen rows inside the hands, hand sizes and trick counts
        matching the stage, match points consistent; AssertionError says which fails."""
        deck, dealt = self.deck, state.dealt

        def broken(what: str) -> AssertionError:
            return AssertionError(f"{self!r}, phase {state.phase.name}: {what}")

        if len(set(dealt)) != len(dealt):
            raise broken("a card was dealt twice")
        if state.stock != dealt[2 * HAND_SIZE :]:
            raise broken("the stock is not the last cards dealt")
        self._check_match(state, broken)
        if state.phase in (Phase.CHOOSE_DEALER, Phase.DEAL):
            first, second = dealt[:HAND_SIZE], dealt[HAND_SIZE : 2 * HAND_SIZE]
            hands = [mask_of(first), mask_of(second)]
            if state.hands != hands or state.played or state.stock_pos:
                raise broken("hands, stock or played cards differ from the cards dealt")
            return

        # Cards: hands + stock not yet drawn + played = the pack, no overlaps.
        if len(dealt) != deck.size:
            raise broken(f"{len(dealt)} cards dealt, the pack has {deck.size}")
        pos = state.stock_pos
        if not 0 <= pos <= len(state.stock) or pos % 2:
            raise broken(f"stock position {pos} in a stock of {len(state.stock)}")
        undrawn = mask_of(state.stock[pos:])
        parts = (state.hands[0], state.hands[1], undrawn, state.played)
        if (
            sum(p.bit_count() for p in parts) != deck.size
            or parts[0] | parts[1] | parts[2] | parts[3] != deck.all_mask
        ):
            raise broken(
                "cards not conserved: hands "
                + " / ".join(deck.format_mask(h) for h in state.hands)
                + f"; stock {deck.format_mask(undrawn)}"
                + f"; played {deck.format_mask(state.played)}"
            )

        # Trumps: the suit of the first face-up card (spades for a joker), all deal.
        top = state.stock[0]
        trump = SPADES if (1 << top) & self.jokers else deck.suit[top]
        mask = deck.suit_mask[trump] | self.jokers
        if state.trump != trump or state.trump_mask != mask:
            raise broken(f"trumps {state.trump}, the turned card is {deck.format(top)}")

        # The Seen row: face-up prizes their winner still holds.
        prizes = mask_of(state.stock[0:pos:2])
        for p in (0, 1):
            stray = state.seen[p] & ~(state.hands[p] & prizes)
            if stray:
                raise broken(
                    f"player_{p}'s Seen row holds {deck.format_mask(stray)}, "
                    "not a prize in his hand"
                )

        # Tricks: one stage-1 trick per two cards drawn; hands shrink only in stage 2.
        t1, t2 = sum(state.tricks1), sum(state.tricks2)
        if t1 != pos // 2:
            raise broken(f"{t1} stage-1 tricks, {pos} stock cards drawn")
        if (t2 and state.stage == 1) or t2 > STAGE2_TRICKS:
            raise broken(f"{t2} stage-2 tricks in stage {state.stage}")
        led = state.lead >= 0
        if state.played.bit_count() != 2 * (t1 + t2) + led:
            raise broken(f"{state.played.bit_count()} cards played in {t1 + t2} tricks")
        if led and not (1 << state.lead) & state.played:
            raise broken("the led card is not out of play")
        for p in (0, 1):
            size = HAND_SIZE - t2 - (led and p == state.leader)
            if state.hands[p].bit_count() != size:
                held = state.hands[p].bit_count()
                raise broken(f"player_{p} holds {held} cards, not {size}")

        # Voids: no card of a suit shown void outside the Seen row.
        for p in (0, 1):
            for s in range(4):
                if state.voids[p] >> s & 1:
                    suit = state.trump_mask if s == state.trump else deck.suit_mask[s]
                    if state.hands[p] & ~state.seen[p] & suit:
                        raise broken(
                            f"player_{p} is marked void in {'SHDC'[s]} but holds "
                            f"{deck.format_mask(state.hands[p] & suit)}"
                        )

        if state.phase == Phase.PLAY:
            if state.winner != -1:
                raise broken("a winner before the end")
            if state.to_play != (1 - state.leader if led else state.leader):
                raise broken(
                    f"player_{state.to_play} to play, player_{state.leader} leads"
                )
            if t1 + t2 == 0 and state.leader != 1 - state.dealer:
                raise broken("the dealer leads the first trick")
            if not self.honeymoon and max(state.tricks2) >= TRICKS_TO_WIN:
                raise broken(f"stage-2 tricks {state.tricks2} but play goes on")
            return

        # Over: German Whist at the 7th stage-2 trick, Honeymoon after all 27 tricks.
        w = state.winner
        if w not in (0, 1) or led:
            raise broken(f"over with winner {w}, a trick half played: {led}")
        if not self.honeymoon:
            won, lost = state.tricks2[w], state.tricks2[1 - w]
            if won != TRICKS_TO_WIN or lost >= TRICKS_TO_WIN:
                raise broken(f"over at stage-2 tricks {state.tricks2}, winner {w}")
            return
        totals = [state.tricks1[p] + state.tricks2[p] for p in (0, 1)]
        if t2 != STAGE2_TRICKS or totals[w] <= HAND_SIZE:
            raise broken(f"deal over at tricks {totals}, winner player_{w}")
        if self.episode == "deal" and state.match[w] != totals[w] - HAND_SIZE:
            raise broken(f"match points {state.match} for tricks {totals}")

    def _check_match(
        self, state: State, broken: Callable[[str], AssertionError]
    ) -> None:
        """Match points: each finished deal gives 1..14 points to one player, and the
        match is over exactly when somebody has the target."""
        match = state.match
        if not self.honeymoon:
            if match != [0, 0] or state.deal_no:
                raise broken(f"match points {match} after {state.deal_no} deals")
            return
        most = self.deck.size // 2 - HAND_SIZE  # 27 tricks - 13
        if not state.deal_no <= sum(match) <= most * state.deal_no:
            raise broken(f"match points {match} after {state.deal_no} deals")
        if state.phase != Phase.OVER:
            if max(match) >= self.match_target:
                raise broken(f"match points {match} but play goes on")
            return
        w = state.winner
        if self.episode == "match":
            finished = match[w] >= self.match_target > match[1 - w]
        else:
            finished = state.deal_no == 1 and match[1 - w] == 0
        if not finished:
            raise broken(
                f"over at match points {match} after {state.deal_no} deals, "
                f"winner player_{w}"
            )

    # --- results ----------------------------------------------------------------------
    def returns(self, state: State) -> list[float]:
        """German Whist: +1 / -1 for the deal. Honeymoon: the deal's match points
        (winner +, loser -) with ``episode="deal"``; +1 / -1 for the match with
        ``episode="match"``."""
        if state.phase != Phase.OVER:
            return [0.0, 0.0]
        w = state.winner
        value = 1.0
        if self.honeymoon and self.episode == "deal":
            value = float(state.match[w])
        return [value if p == w else -value for p in (0, 1)]

    def utility_bounds(self) -> tuple[float, float]:
        # Honeymoon deals pay the winner's match points: tricks over 13, at most 13.
        deal_points = self.honeymoon and self.episode == "deal"
        bound = 13.0 if deal_points else 1.0
        return -bound, bound

    def rule_tables(self) -> dict[str, Any]:
        """The pack, the card strengths and the deal's counts (`Game.rule_tables`)."""
        return {
            **super().rule_tables(),
            "strength": list(self._strength),
            "joker_order": list(self.joker_order),
            "hand_size": HAND_SIZE,
            "stock_size": self.stock_size,
            "stage2_tricks": STAGE2_TRICKS,
            "tricks_to_win": TRICKS_TO_WIN,
            "joker_trumps": SPADES,
            "match_target": self.match_target,
        }

    def info(self, state: State) -> dict[str, Any]:
        return {
            "stage": state.stage if state.phase == Phase.PLAY else 0,
            "tricks_stage1": tuple(state.tricks1),
            "tricks_stage2": tuple(state.tricks2),
            "match_points": tuple(state.match),
            "deal": state.deal_no,
        }

    # --- names, observation, rendering ------------------------------------------------
    def action_name(self, action: int) -> str:
        return self.deck.format(action)

    def action_id(self, name: str) -> int:
        return self.deck.card(name)

    def observe(self, state: State, player: int) -> np.ndarray:
        return observation.encode(self, state, player)

    def forced_chance(self, options: Mapping[str, Any]) -> list[int | None]:
        """Chance outcomes for ``{"dealer": d}`` and/or ``{"deal": …}`` /
        ``{"deals": [...]}``.

        A deal is
        ``{"dealer": d, "hands": [[13 names], [13 names]], "stock": [top first …]}``; in
        a match the dealer of later deals is fixed by alternation and may be left out.
        Errors name the deal (``deal``, ``deals[1]``). In a match, deals after the
        forced ones are random (a `LaterDealsRandomWarning` says so, once per env).
        """
        one = 1 if self.episode == "deal" else None  # a match has no fixed length
        keys = ("dealer", "hands", "stock")
        return forced_deals(self, options, self._deal_cards, keys, most=one, total=one)

    def _deal_cards(self, deal: Mapping, where: str, dealer: int | None) -> list[int]:
        """A forced deal's cards in dealing order: the two hands, then the stock."""
        hands = parse_hands(self.deck, deal, 2, HAND_SIZE, where)
        stock = parse_cards(self.deck, deal.get("stock"), f"{where}['stock']")
        if len(stock) != self.stock_size:
            raise ValueError(
                f"{where}['stock'] must have {self.stock_size} cards, got {len(stock)}"
            )
        check_partition(self.deck, [*hands, stock], where)
        return hands[0] + hands[1] + stock

    def render(self, state: State, viewer: int | None = None) -> str:
        return observation.render(self, state, viewer)


__all__ = ["GermanWhist", "Phase", "State"]
