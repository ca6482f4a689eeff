"""Forty-Fives, Twenty-Five, Auction Forty-Fives (120) and One Hundred and Ten: the
engine.

Implements seed ``003_413a098292a99e2d.txt`` (German) with its lost trump table and
every gap resolved as in ``shared/rules-notes.md`` §1; ``docs/games/forty_fives.md``
lists each rule with the sentence it rests on. Plain Python, no RNG: the deal is a
sequence of chance outcomes (the first dealer, then the cards in the order they are
dealt: packets of 3 then 2 to each player from the dealer's left, the auction kitty
after the first round, then the stock from the top), so tests and
``reset(options={"deal": …})`` can force any deal.

Seed quotes in the comments are the seed's German, with the notes' reading where it
matters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..core.cards import FRENCH_52, SUITS, cards_in, mask_of, parse_suit
from ..core.deal import (
    check_partition,
    deal_list,
    deal_name,
    parse_cards,
    parse_dealer,
    parse_hands,
    rotation_dealer,
    warn_later_deals_random,
)
from ..core.engine import (
    CHANCE,
    TERMINAL,
    Game,
    check_choice,
    check_inert,
    check_keys,
)
from . import observation
from .state import Phase, State

DECK = FRENCH_52
HAND_SIZE = 5
KITTY_SIZE = 3
TRICK_POINTS = 5  # "Jeder Stich bringt der Partei, die ihn gewinnt, 5 Punkte."
BONUS_POINTS = 5  # "Der Stich mit dem höchsten Trumpf … bringt 5 Punkte extra."
BID_LEVELS = (15, 20, 25, 30)  # "bietet man 15, 20, 25 oder 30 Punkte"
HEARTS = SUITS.index("H")
ACE_OF_HEARTS = DECK.card("AH")

VARIANTS = ("forty_fives", "twenty_five", "auction", "one_ten")
AUCTION_VARIANTS = ("auction", "one_ten")
EPISODES = ("deal", "match")
PACKETS = {"3+2": (3, 2), "2+3": (2, 3)}  # "erst 3, dann 2 (oder erst 2, dann 3)"
#: the target of each variant: 45, "wer zuerst 25 hat", "Gespielt wird bis 120 / 110"
TARGETS = {"forty_fives": 45, "twenty_five": 25, "auction": 120, "one_ten": 110}
DEFAULT_MAX_DEALS = 100  # a match's deal limit (a safeguard, rules-notes §1.3)

# --- the card orders (rules-notes §1.3; the seed's own table was lost) ----------------
#: trumps, highest first; "AH" is the ace of hearts, always the third-best trump.
TRUMP_ORDER = {
    "S": "5 J AH A K Q 2 3 4 6 7 8 9 10",
    "C": "5 J AH A K Q 2 3 4 6 7 8 9 10",
    "D": "5 J AH A K Q 10 9 8 7 6 4 3 2",
    "H": "5 J AH K Q 10 9 8 7 6 4 3 2",
}
#: plain suits, highest first: "In Rot hoch, in Schwarz niedrig." (A♥: never plain)
PLAIN_ORDER = {
    "S": "K Q J A 2 3 4 5 6 7 8 9 10",
    "C": "K Q J A 2 3 4 5 6 7 8 9 10",
    "D": "K Q J 10 9 8 7 6 5 4 3 2 A",
    "H": "K Q J 10 9 8 7 6 5 4 3 2",
}
TRUMP_BASE = 100  # every trump's strength is above every plain card's

# --- the flat action space ------------------------------------------------------------
PLAY = 0  # 0..51: play card c
ROB = 52  # 52..103: rob the turned card, burying card c (then play on)
#: "norob": kept so that the action space stays the same, never legal: the eligible
#: player declines by playing his first card (see `_rob`)
NOROB = 104
PASS = 105
BID = 106  # 106..109: bid 15, 20, 25, 30
HOLD = 110
TRUMP = 111  # 111..114: name trumps S, H, D, C
DISCARD = 115  # 115..166: discard card c
DONE = 167
NUM_ACTIONS = 168

KITTY = -1  # deal destinations other than a seat
STOCK = -2


def _card(rank: str, suit: str) -> int:
    return DECK.card(rank if rank == "AH" else rank + suit)


def _strength_tables() -> list[list[int]]:
    """``table[t][c]``: the strength of card c when suit t is trumps (higher wins).

    Trumps are ``TRUMP_BASE + …``; plain cards rank 1..13 inside their own suit.
    """
    tables = []
    for t, trump_suit in enumerate(SUITS):
        table = [0] * DECK.size
        order = TRUMP_ORDER[trump_suit].split()
        for i, rank in enumerate(order):
            table[_card(rank, trump_suit)] = TRUMP_BASE + len(order) - i
        for suit in SUITS:
            if suit == trump_suit:
                continue
            order = PLAIN_ORDER[suit].split()
            for i, rank in enumerate(order):
                table[DECK.card(rank + suit)] = len(order) - i
        assert sum(1 for v in table if v >= TRUMP_BASE) == (13 if t == HEARTS else 14)
        tables.append(table)
    return tables


STRENGTH = _strength_tables()
#: the trump suit of each trump choice, the A♥ included: "das A♥ ist immer Trumpf"
TRUMP_MASK = [DECK.suit_mask[t] | 1 << ACE_OF_HEARTS for t in range(4)]
#: ``PLAIN_MASK[t][s]``: the cards that follow a plain lead of suit s (never the A♥)
PLAIN_MASK = [[DECK.suit_mask[s] & ~TRUMP_MASK[t] for s in range(4)] for t in range(4)]
#: the three top trumps: "Trumpf-5, Trumpf-Bube und A♥"
TOP_TRUMPS = [mask_of((_card("5", s), _card("J", s), ACE_OF_HEARTS)) for s in SUITS]


def _protected_tables() -> list[list[int]]:
    """``table[t][led]``: the top trumps that may renege when trump ``led`` is led.

    "Du musst eine dieser Karten nur legen, wenn ein besserer dieser drei Trümpfe
    ausgespielt wurde": a top trump is protected exactly when it ranks above the led
    card.
    """
    out = []
    for t in range(4):
        row = [0] * DECK.size
        for led in cards_in(TRUMP_MASK[t]):
            row[led] = mask_of(
                c for c in cards_in(TOP_TRUMPS[t]) if STRENGTH[t][c] > STRENGTH[t][led]
            )
        out.append(row)
    return out


PROTECTED = _protected_tables()


def team_layout(num_players: int) -> list[list[int]]:
    """The sides: partners opposite with 4, alternating seats with 6, else one seat
    each."""
    if num_players in (4, 6):
        return [list(range(0, num_players, 2)), list(range(1, num_players, 2))]
    return [[s] for s in range(num_players)]


class FortyFives(Game[State]):
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

    # --- chance: who deals, and the deal ----------------------------------------------
    def _deal_destinations(self, dealer: int) -> list[int]:
        """Where each card of the deal goes, in deal order: a seat, KITTY or STOCK.

        "Dann gibt er im Uhrzeigersinn, links beginnend, jedem 5 Karten: erst 3, dann
        2"; the auction kitty is dealt after the first round (NEA45s), the stock is the
        rest.
        """
        n = self.num_players
        out: list[int] = []
        for i, size in enumerate(self.packets):
            for k in range(1, n + 1):
                out.extend([(dealer + k) % n] * size)
            if self.auction and i == 0:
                out.extend([KITTY] * KITTY_SIZE)
        out.extend([STOCK] * (DECK.size - len(out)))
        return out

    def _packet_starts(self) -> frozenset[int]:
        """Deal positions where a new packet begins (kitty and stock count as
        packets)."""
        starts, pos = set(), 0
        for i, size in enumerate(self.packets):
            for _ in range(self.num_players):
                starts.add(pos)
                pos += size
            if self.auction and i == 0:
                starts.add(pos)
                pos += KITTY_SIZE
        starts.add(pos)
        return frozenset(starts)

    def packets_dealt(self, state: State) -> list[tuple[str, list[str]]]:
        """The deal as it happened, packet by packet: ``("player_1", ["QS", "2H",
        "9C"])``, then ``("kitty", …)`` (auction) and ``("stock", [top first …])``."""
        out: list[tuple[str, list[str]]] = []
        if state.dealer < 0:
            return out
        starts = self._packet_starts()
        for i, card in enumerate(state.dealt):
            where = self._dest[state.dealer][i]
            if i in starts:
                label = (
                    "kitty"
                    if where == KITTY
                    else "stock"
                    if where == STOCK
                    else f"player_{where}"
                )
                out.append((label, []))
            out[-1][1].append(DECK.format(card))
        return out

    def new_state(self) -> State:
        return State(self.num_players, self.num_teams)

    def current_player(self, state: State) -> int:
        phase = state.phase
        if phase >= Phase.BID:
            return TERMINAL if phase == Phase.OVER else state.to_play
        return CHANCE

    def chance_outcomes(self, state: State) -> list[tuple[int, float]]:
        if state.phase == Phase.CHOOSE_DEALER:
            n = self.num_players
            return [(d, 1.0 / n) for d in range(n)]
        if state.phase == Phase.DEAL:
            left = cards_in(DECK.all_mask & ~mask_of(state.dealt))
            return [(c, 1.0 / len(left)) for c in left]
        raise ValueError("not a chance node")

    def sample_chance(self, state: State, rng: np.random.Generator) -> list[int]:
        if state.phase == Phase.DEAL:
            # The rest of the shuffle at once: the same distribution as card-by-card
            # draws.
            left = cards_in(DECK.all_mask & ~mask_of(state.dealt))
            return [left[i] for i in rng.permutation(len(left)).tolist()]
        return super().sample_chance(state, rng)

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

    def _deal_card(self, state: State, card: int) -> None:
        if not 0 <= card < DECK.size or card in state.dealt:
            raise self.illegal(state, card, "that card is not left in the pack")
        where = self._dest[state.dealer][len(state.dealt)]
        state.dealt.append(card)
        if where >= 0:
            state.hands[where] |= 1 << card
        elif where == KITTY:
            state.kitty |= 1 << card
        else:
            state.stock.append(card)
        if len(state.dealt) == DECK.size:
            self._deal_done(state)

    def _deal_done(self, state: State) -> None:
        first = (state.dealer + 1) % self.num_players
        if self.auction:
            # "Nach dem Geben bietet man …": no turned card and no robbing; eldest bids
            # first.
            state.phase = Phase.BID
            state.to_play = first
            return
        # "Den Rest legt er verdeckt ab und deckt die oberste Karte auf. Ihre Farbe ist
        # … Trumpf."
        turned = state.stock[0]
        state.turned = turned
        self._set_trumps(state, DECK.suit[turned])
        # "Wer das Trumpf-Ass hat, darf rauben … Ist die aufgedeckte Karte selbst ein
        # Ass, darf der Geber sie auf dieselbe Weise rauben."
        if DECK.rank[turned] == 0:
            state.rob_seat = state.dealer
        else:
            ace = 1 << DECK.card("A" + SUITS[state.trump])
            state.rob_seat = next(
                (s for s in range(self.num_players) if state.hands[s] & ace), -1
            )
        # "Der linke Nachbar des Gebers spielt zum ersten Stich aus"
        self._start_play(state, first)

    def _set_trumps(self, state: State, suit: int) -> None:
        state.trump = suit
        state.trump_mask = TRUMP_MASK[suit]

    def _start_play(self, state: State, leader: int) -> None:
        state.leader = state.to_play = leader
        state.phase = Phase.PLAY

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

    def legal_mask(self, state: State) -> int:
        """The cards the player to act may play, as a bitmask."""
        hand = state.hands[state.to_play]
        if not state.trick:
            return hand  # the leader leads any card
        lead = state.trick[0]
        tm = state.trump_mask
        trumps = hand & tm
        if (1 << lead) & tm:
            # "Trumpf wird ausgespielt: Du musst Trumpf zugeben, wenn du hast …
            # Trumpf-5, Trumpf-Bube und A♥ darfst du behalten. Du musst eine dieser
            # Karten nur legen, wenn ein besserer dieser drei Trümpfe ausgespielt wurde.
            # Sind sie deine einzigen Trümpfe, darfst du stattdessen eine beliebige
            # Karte legen."
            if not trumps:
                return hand
            protected = trumps & PROTECTED[state.trump][lead]
            if trumps & ~protected:
                return trumps  # any trump, protected or not
            return hand  # only protected trumps: any card
        # "Nicht-Trumpf wird ausgespielt: Du musst bedienen … oder trumpfen – stechen
        # ist immer erlaubt, auch wenn du bedienen könntest." The A♥ never follows
        # hearts.
        follow = hand & PLAIN_MASK[state.trump][DECK.suit[lead]]
        if follow:
            return follow | trumps
        # "Nur wenn du beides nicht kannst, darfst du eine beliebige Karte legen."
        # [SEED≠STD]: with void_must_trump=False a void player may play anything (Hoyle,
        # pagat).
        if self.void_must_trump and trumps:
            return trumps
        return hand

    def _legal_bids(self, state: State) -> list[int]:
        high = state.bid_high
        raises = [BID + k for k, v in enumerate(BID_LEVELS) if v > high]
        if state.to_play != state.dealer:
            return [PASS, *raises]
        if high == 0:
            # "passen alle, muss der Geber 15 spielen": no pass; he may bid 15 or more.
            return raises
        # The dealer may hold: take the contract at the current high bid.
        return [PASS, *raises, HOLD]

    def _legal_discards(self, state: State) -> list[int]:
        hand = state.hands[state.to_play]
        count = hand.bit_count()
        out = []
        # Never more discards than the stock can replace [ENGINE CHOICE, rules-notes
        # §1.3].
        if count - 1 + len(state.stock) - state.stock_pos >= HAND_SIZE:
            out = [DISCARD + c for c in cards_in(hand)]
        if count <= HAND_SIZE:
            out.append(DONE)  # the bidder holds 8 and must discard at least 3
        return out

    # --- robbing ----------------------------------------------------------------------
    def _rob(self, state: State, action: int) -> None:
        """``rob:X`` at the robber's first turn: X goes under the stock, the turned card
        into his hand, and he plays on. There is no separate decline: playing the first
        card is one ("sonst ist das Recht verfallen"), so nobody learns from the turn
        order who might have robbed."""
        player = state.to_play
        if action == NOROB:
            raise self.illegal(
                state,
                action,
                "there is no separate decline: playing your first card without robbing "
                "declines",
            )
        if player != state.rob_seat:
            raise self.illegal(
                state,
                action,
                "only the holder of the ace of trumps (or the dealer, when an ace is "
                "turned) may rob, before playing his first card",
            )
        if not state.hands[player] >> (action - ROB) & 1:
            raise self.illegal(state, action, "bury a card from your own hand")
        # "eine beliebige Karte aus der Hand gegen die aufgedeckte Karte tauschen. Die
        # unerwünschte Karte kommt verdeckt unter den Stapel."
        bit = 1 << (action - ROB)
        state.hands[player] ^= bit
        state.hands[player] |= 1 << state.turned
        state.buried = action - ROB
        state.put_away[player] |= bit
        state.robbed_by = player
        state.rob_seat = -1

    # --- bidding, trumps, discards (auction variants) ---------------------------------
    def _bid(self, state: State, action: int) -> None:
        if action not in self._legal_bids(state):
            raise self.illegal(state, action, "not a legal call in the auction now")
        player = state.to_play
        n = self.num_players
        state.bid_history.append((player, action))
        if action == PASS:
            state.passed |= 1 << player  # a pass is final
        elif action == HOLD:
            state.bid_winner = player
            state.held += 1
        else:
            level = action - BID
            state.bid_high = BID_LEVELS[level]
            state.bid_winner = player
            state.bid_levels[player] |= 1 << level
        active = [s for s in range(n) if not state.passed >> s & 1]
        if len(active) == 1 and active[0] == state.bid_winner:
            state.bidder = state.bid_winner
            state.contract = state.bid_high
            state.phase = Phase.TRUMP  # "Wer das Höchstgebot hat, bestimmt den Trumpf"
            state.to_play = state.bidder
            return
        nxt = (player + 1) % n
        while state.passed >> nxt & 1:
            nxt = (nxt + 1) % n
        state.to_play = nxt

    def _name_trumps(self, state: State, action: int) -> None:
        if not TRUMP <= action < TRUMP + 4:
            raise self.illegal(state, action, "the bidder must name trumps")
        self._set_trumps(state, action - TRUMP)
        # "… und nimmt eine Kitty aus 3 zusätzlich verdeckt gegebenen Karten auf"
        state.hands[state.bidder] |= state.kitty
        state.kitty = 0
        state.phase = Phase.DISCARD
        state.discard_pos = 0
        state.to_play = (state.dealer + 1) % self.num_players

    def _discard(self, state: State, action: int) -> None:
        if action not in self._legal_discards(state):
            raise self.illegal(
                state,
                action,
                "discard a card (the stock must be able to "
                "refill it) or say done once you hold 5 or fewer",
            )
        player = state.to_play
        if action != DONE:
            bit = 1 << (action - DISCARD)
            state.hands[player] ^= bit
            state.put_away[player] |= bit
            state.discards[player] += 1
            return
        # "der Geber füllt alle Hände vom Stapel auf 5 Karten auf", starting on his left
        need = HAND_SIZE - state.hands[player].bit_count()
        for card in state.stock[state.stock_pos : state.stock_pos + need]:
            state.hands[player] |= 1 << card
        state.stock_pos += need
        state.drawn[player] = need
        n = self.num_players
        state.discard_pos += 1
        if state.discard_pos < n:
            state.to_play = (state.dealer + 1 + state.discard_pos) % n
            return
        # "Der Bieter spielt aus." [SEED≠STD] bidder_leads=False: the player on his
        # left.
        leader = state.bidder if self.bidder_leads else (state.bidder + 1) % n
        self._start_play(state, leader)

    # --- play -------------------------------------------------------------------------
    def _play(self, state: State, card: int) -> None:
        player = state.to_play
        bit = 1 << card if 0 <= card < DECK.size else 0
        if not bit & state.hands[player]:
            raise self.illegal(state, card, f"player_{player} does not hold that card")
        if not bit & self.legal_mask(state):
            if (1 << state.trick[0]) & state.trump_mask:
                why = (
                    "a trump was led: play a trump (only 5, J and A♥ above the led "
                    "card may renege)"
                )
            else:
                why = "follow suit or trump" + (
                    " (void: you must trump)" if self.void_must_trump else ""
                )
            raise self.illegal(state, card, why)
        if player == state.rob_seat:
            # "Geraubt wird, bevor du deine erste Karte spielst – sonst ist das Recht
            # verfallen."
            state.rob_seat = -1
        state.hands[player] ^= bit
        state.played |= bit
        state.played_by[player] |= bit
        state.trick.append(card)
        n = self.num_players
        if len(state.trick) < n:
            state.to_play = (player + 1) % n
            return
        self._finish_trick(state)

    def trick_winner(self, state: State) -> tuple[int, int]:
        """(index in the trick, strength) of the card winning the current trick so far.

        "Der höchste Trumpf gewinnt den Stich; liegt kein Trumpf, gewinnt die höchste
        Karte der ausgespielten Farbe."
        """
        strength = STRENGTH[state.trump]
        tm = state.trump_mask
        trick = state.trick
        lead = trick[0]
        follow = tm if (1 << lead) & tm else PLAIN_MASK[state.trump][DECK.suit[lead]]
        best_i, best = 0, strength[lead]
        for i in range(1, len(trick)):
            c = trick[i]
            if (1 << c) & (tm | follow):
                s = strength[c]
                if s > best:
                    best_i, best = i, s
        return best_i, best

    def _finish_trick(self, state: State) -> None:
        n = self.num_players
        index, strength = self.trick_winner(state)
        winner = (state.leader + index) % n
        team = self.team_of[winner]
        state.tricks_won[winner] += 1
        state.deal_points[team] += TRICK_POINTS
        if strength >= TRUMP_BASE and strength > state.best_trump:
            # The highest trump of a trick always wins it, so its side holds the bonus.
            state.best_trump = strength
            state.bonus_team = team
        state.trick = []
        state.trick_no += 1
        # "danach jeweils der Gewinner des letzten Stichs"
        state.leader = state.to_play = winner
        if self.twenty_five:
            # "wer zuerst 25 hat, gewinnt sofort, auch mitten im Spiel"
            state.scores[team] += TRICK_POINTS
            state.deal_gain[team] += TRICK_POINTS
            if state.scores[team] >= self.target:
                state.winner = team
                state.deal_no += 1  # the deal ends here too
                state.phase = Phase.OVER
                return
        if state.trick_no == HAND_SIZE:
            self._finish_deal(state)
            return
        state.phase = Phase.PLAY

    def _finish_deal(self, state: State) -> None:
        taken = state.deal_points[:]
        if not self.twenty_five and state.bonus_team >= 0:
            # "Legt im ganzen Spiel niemand einen Trumpf, gibt es keinen Bonus"
            taken[state.bonus_team] += BONUS_POINTS
        if self.twenty_five:
            gain = [0] * self.num_teams  # already scored trick by trick
        elif self.auction:
            gain = self._auction_gains(state, taken)
        else:
            gain = taken
        for t in range(self.num_teams):
            state.scores[t] += gain[t]
            state.deal_gain[t] += gain[t]
        state.deal_no += 1
        state.phase = Phase.OVER
        if self.episode == "deal":
            return
        winner = self._match_winner(state)
        if winner is not None:
            state.winner = winner
            return
        if state.deal_no >= self.max_deals:
            # Deal limit (a safeguard): the leader wins, a shared lead is a draw.
            top = max(state.scores)
            leaders = [t for t, s in enumerate(state.scores) if s == top]
            state.winner = leaders[0] if len(leaders) == 1 else -1
            return
        self._next_deal(state)

    def _auction_gains(self, state: State, taken: list[int]) -> list[int]:
        """The score changes of an auction deal, the 110 cap applied."""
        bidding = self.team_of[state.bidder]
        gain = taken[:]
        if taken[bidding] >= state.contract:
            if self.thirty_for_sixty and state.contract == 30:
                gain[bidding] = 60  # Hoyle: a made 30 counts 60
        else:
            # "erreicht die Partei des Bieters ihr Gebot nicht, wird es stattdessen
            # abgezogen"
            gain[bidding] = -state.contract
        if self.cap is not None:
            # "über 105 kommt nur, wer gerade Bieter ist": the other sides stop at 105.
            for t in range(self.num_teams):
                if t != bidding:
                    old = state.scores[t]
                    gain[t] = min(old + gain[t], max(old, self.cap)) - old
        return gain

    def _match_winner(self, state: State) -> int | None:
        """The winning side after a deal, or None to play on."""
        scores = state.scores
        if self.auction and self.bidder_out_first:
            bidding = self.team_of[state.bidder]
            if scores[bidding] >= self.target:
                return bidding
        # "Die Partei, die zuerst 45 Punkte erreicht, gewinnt. Kommen zwei Parteien im
        # selben Spiel darüber, gewinnt die mit der höheren Punktzahl." A tie at the
        # top: another deal [ENGINE CHOICE].
        top = max(scores)
        if top < self.target:
            return None
        leaders = [t for t, s in enumerate(scores) if s == top]
        return leaders[0] if len(leaders) == 1 else None

    def _next_deal(self, state: State) -> None:
        # "Danach gibt reihum der linke Nachbar."
        state.dealer = (state.dealer + 1) % self.num_players
        state._reset_deal(self.num_players, self.num_teams)
        state.deal_gain = [0] * self.num_teams
        state.phase = Phase.DEAL

    # --- results ----------------------------------------------------------------------
    def returns(self, state: State) -> list[float]:
        """Match: +1 to each seat of the winning side, -1 to each other seat with two
        sides, -1/(n-1) with n players alone; 0 for all on a draw. Deal: each side's
        score change minus the mean change of all sides. Zero-sum either way."""
        n = self.num_players
        if state.phase != Phase.OVER:
            return [0.0] * n
        if self.episode == "deal":
            mean = sum(state.deal_gain) / self.num_teams
            return [float(state.deal_gain[self.team_of[s]] - mean) for s in range(n)]
        w = state.winner
        if w < 0:
            return [0.0] * n
        lose = -1.0 / (self.num_teams - 1)
        return [1.0 if self.team_of[s] == w else lose for s in range(n)]

    def utility_bounds(self) -> tuple[float, float]:
        if self.episode == "match":
            return -1.0, 1.0
        # A side's deal gain lies in -30 (a failed 30 bid) .. 60 (a made 30 counting
        # 60); a return is that gain less the sides' mean.
        return -90.0, 90.0

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

    # --- forced deals -----------------------------------------------------------------
    def forced_chance(self, options: Mapping[str, Any]) -> list[int | None]:
        """Chance outcomes for ``{"dealer": d}`` and/or ``{"deal": …}`` / ``{"deals":
        [...]}``.

        A deal is ``{"dealer": d, "hands": [[5 names] × n], "stock": [top first …]}``
        (the base game's turned card is ``stock[0]``); the auction variants add
        ``"kitty": [3 names]``. Each hand lists its first packet first. Every card of
        the pack appears exactly once. Later deals of a match may leave out the dealer
        (it rotates to the left). Errors name the deal (``deal``, ``deals[1]``). In a
        match, deals after the forced ones are random (a `LaterDealsRandomWarning`
        says so, once per env).
        """
        n = self.num_players
        deals = deal_list(options)
        if len(deals) > 1 and self.episode == "deal":
            raise ValueError(
                "options['deals'] gives several deals but the episode is one deal"
            )
        first_dealer = (
            parse_dealer(options, n, "options") if "dealer" in options else None
        )
        out: list[int | None] = []
        keys = (
            ("dealer", "hands", "stock", "kitty")
            if self.auction
            else ("dealer", "hands", "stock")
        )
        for i, deal in enumerate(deals):
            where = deal_name(options, i)
            if not self.auction and "kitty" in deal:
                raise ValueError(
                    f"{where}['kitty']: only the auction variants deal a kitty "
                    f"(variant={self.variant!r})"
                )
            check_keys(where, deal, keys)
            if self.auction and "kitty" not in deal:
                # before the stock's count, which a deal without its kitty also breaks
                raise ValueError(
                    f"{where} has no 'kitty': the auction variants deal "
                    f"{KITTY_SIZE} cards face down to a kitty; give "
                    f"{where}['kitty'] = [{KITTY_SIZE} card names]"
                )
            first_dealer = rotation_dealer(i, deal, first_dealer, n, where)
            if first_dealer is None:
                raise ValueError(
                    f"a forced deal needs its dealer: give {where}['dealer'] or "
                    "options['dealer'] (the packet order depends on it)"
                )
            hands = parse_hands(DECK, deal, n, HAND_SIZE, where)
            stock = parse_cards(DECK, deal.get("stock"), f"{where}['stock']")
            if len(stock) != self.stock_size:
                raise ValueError(
                    f"{where}['stock'] must have {self.stock_size} cards "
                    f"(52 - {HAND_SIZE} x {n}"
                    f"{' - 3 for the kitty' if self.auction else ''}), "
                    f"got {len(stock)}"
                )
            groups = [*hands, stock]
            kitty: list[int] = []
            if self.auction:
                kitty = parse_cards(DECK, deal["kitty"], f"{where}['kitty']")
                if len(kitty) != KITTY_SIZE:
                    raise ValueError(
                        f"{where}['kitty'] must have {KITTY_SIZE} cards, "
                        f"got {len(kitty)}"
                    )
                groups.append(kitty)
            check_partition(DECK, groups, where)
            out.extend(self._order_deal((first_dealer + i) % n, hands, kitty, stock))
        if first_dealer is None and not deals:
            return []
        if deals and self.episode == "match" and len(deals) < self.max_deals:
            warn_later_deals_random(self, len(deals), "match")
        return [first_dealer, *out]

    def _order_deal(
        self, dealer: int, hands: list[list[int]], kitty: list[int], stock: list[int]
    ) -> list[int]:
        """The cards of one deal in deal order (packets from the dealer's left)."""
        taken = [0] * self.num_players
        k = s = 0
        out = []
        for where in self._dest[dealer]:
            if where >= 0:
                out.append(hands[where][taken[where]])
                taken[where] += 1
            elif where == KITTY:
                out.append(kitty[k])
                k += 1
            else:
                out.append(stock[s])
                s += 1
        return out

    # --- invariants (the soak runner checks them after every step) --------------------
    @property
    def max_game_length(self) -> int:
        """An upper bound on the decisions in one episode."""
        n = self.num_players
        # plays + rob, or bids (each seat at most 4 raises/holds and a pass) + trumps +
        # discards (each card once, plus a done each) + plays.
        per_deal = HAND_SIZE * n + 1
        if self.auction:
            per_deal += 6 * n + 1 + (HAND_SIZE * n + KITTY_SIZE) + n
        deals = 1 if self.episode == "deal" else self.max_deals
        return deals * per_deal

    def check_invariants(self, state: State) -> None:
        """Cards conserved, hand sizes matching the phase, trick points and scores
        adding up; AssertionError saying which one fails."""

        def require(ok: bool, what: str) -> None:
            if not ok:
                raise AssertionError(f"{self!r} (phase {state.phase.name}): {what}")

        n = self.num_players
        dealt = state.dealt
        require(len(set(dealt)) == len(dealt), "a card was dealt twice")
        require(
            state.deal_no <= self.max_deals,
            f"{state.deal_no} deals, limit {self.max_deals}",
        )
        if state.phase in (Phase.CHOOSE_DEALER, Phase.DEAL):
            require(
                state.played == 0 and not state.trick, "cards played during the deal"
            )
            return
        require(len(dealt) == DECK.size, f"{len(dealt)} cards dealt")
        require(
            state.stock
            == [
                c
                for c, w in zip(dealt, self._dest[state.dealer], strict=True)
                if w == STOCK
            ],
            "the stock is not the cards dealt to it",
        )

        # Cards: hands + played + kitty + undrawn stock + discards = the pack, each card
        # once. Base game: the turned card lies on the stock until robbed, and the
        # buried card goes under the stock in its place.
        stock = mask_of(state.stock[state.stock_pos :])
        if state.robbed_by >= 0:
            stock = stock & ~(1 << state.turned) | 1 << state.buried
        away = 0 if not self.auction else _union(state.put_away)
        parts = [*state.hands, state.played, state.kitty, stock, away]
        total = sum(p.bit_count() for p in parts)
        require(
            total == DECK.size and _union(parts) == DECK.all_mask,
            f"cards not conserved ({total} counted): hands "
            + " / ".join(DECK.format_mask(h) for h in state.hands),
        )
        if state.robbed_by >= 0:
            require(
                state.put_away[state.robbed_by] == 1 << state.buried,
                "the buried card is not the robber's",
            )
        require(
            state.played == _union(state.played_by), "played cards without a player"
        )

        # Trumps: the turned card's suit (base), the bidder's choice (auction).
        if not self.auction:
            require(
                state.turned == state.stock[0], "the turned card is not the stock's top"
            )
            require(
                state.trump == DECK.suit[state.turned],
                "trumps differ from the turned suit",
            )
        if state.trump >= 0:
            require(state.trump_mask == TRUMP_MASK[state.trump], "wrong trump mask")

        # Hand sizes.
        in_trick = len(state.trick)
        for s in range(n):
            size = state.hands[s].bit_count()
            if state.phase in (Phase.BID, Phase.TRUMP):
                require(
                    size == HAND_SIZE, f"player_{s} holds {size} cards in the auction"
                )
            elif state.phase == Phase.DISCARD:
                pos = (s - state.dealer - 1) % n
                if pos >= state.discard_pos and s != state.to_play:
                    expect = HAND_SIZE + (KITTY_SIZE if s == state.bidder else 0)
                    require(
                        size == expect, f"player_{s} holds {size} before discarding"
                    )
                elif pos < state.discard_pos:
                    require(
                        size == HAND_SIZE, f"player_{s} holds {size} after the refill"
                    )
            elif state.phase == Phase.PLAY:
                played_now = (s - state.leader) % n < in_trick
                expect = HAND_SIZE - state.trick_no - played_now
                require(
                    size == expect, f"player_{s} holds {size} cards, expected {expect}"
                )
                require(
                    state.played_by[s].bit_count() == state.trick_no + played_now,
                    f"player_{s} played {state.played_by[s].bit_count()} cards",
                )
        if self.auction:
            for s in range(n):
                require(
                    state.put_away[s].bit_count() == state.discards[s],
                    f"player_{s}'s discards miscounted",
                )
            require(state.stock_pos == sum(state.drawn), "stock draws miscounted")
            require(
                state.stock_pos <= len(state.stock), "drew past the end of the stock"
            )

        # Points: 5 per trick won, to the winner's side.
        for t in range(self.num_teams):
            won = sum(state.tricks_won[s] for s in self._teams[t])
            require(
                state.deal_points[t] == TRICK_POINTS * won,
                f"side {t} has {state.deal_points[t]} points for {won} tricks",
            )
        require(sum(state.tricks_won) == state.trick_no, "trick count mismatch")
        if state.phase == Phase.PLAY:
            require(
                state.to_play == (state.leader + in_trick) % n, "wrong player to act"
            )
            require(state.winner == -1, "a winner before the end")
        if state.rob_seat >= 0:
            require(
                state.phase == Phase.PLAY
                and state.trick_no == 0
                and not state.played_by[state.rob_seat]
                and state.robbed_by < 0,
                "a rob still open after the eligible player's first card",
            )
        # Scores: every finished deal handed out 25 points, or 30 with a trump played
        # (auction: failed bids come off, the 110 cap cuts; checked by range only).
        total, done = sum(state.scores), state.deal_no
        if self.twenty_five:
            tricks = (
                done * HAND_SIZE
                if state.phase == Phase.OVER
                else (done * HAND_SIZE + state.trick_no)
            )
            require(
                total <= tricks * TRICK_POINTS and total % TRICK_POINTS == 0,
                f"scores {state.scores} after {tricks} tricks",
            )
            if state.phase != Phase.OVER:
                require(
                    max(state.scores) < self.target,
                    f"scores {state.scores} reached the target but play goes on",
                )
        elif not self.auction:
            require(
                25 * done <= total <= 30 * done,
                f"scores {state.scores} after {done} deals",
            )
        else:
            require(
                total <= 60 * done and min(state.scores) >= -30 * done,
                f"scores {state.scores} after {done} deals",
            )
        if state.phase == Phase.OVER and self.episode == "match" and state.winner >= 0:
            w = state.winner
            require(
                state.scores[w] >= self.target or state.deal_no == self.max_deals,
                f"side {w} won with {state.scores[w]}",
            )
            require(
                all(s < state.scores[w] for t, s in enumerate(state.scores) if t != w)
                or (self.auction and self.bidder_out_first),
                f"side {w} won with scores {state.scores}",
            )


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


def _union(masks: list[int]) -> int:
    out = 0
    for m in masks:
        out |= m
    return out


__all__ = ["FortyFives", "Phase", "State"]
