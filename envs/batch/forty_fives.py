"""Forty-Fives, Twenty-Five, Auction Forty-Fives and 110 for B games at once, as
torch tensors (batch first).

The rules are those of the scalar engine `parlour.envs.forty_fives.rules` (seed
*Forty-Fives: Ausführliche Regeln*, ``docs/games/forty_fives.md``); this module only
re-expresses them as array operations, and ``tests/test_batch_forty_fives.py`` checks
that both play the same game move by move. Every step costs the same fixed list of
tensor operations whatever the games' positions: a rob and a card play (and, in the
auction variants, a call, naming trumps and a discard) are all computed for every game
and kept with ``torch.where`` by phase and action, the trick's best card so far is
updated at every play, and a finished trick, deal or match is scored for every game and
kept where it happened.

Covered: every variant and option of the scalar env (2..6 players, the four variants,
``episode``, ``target``, ``void_must_trump``, ``packets``, ``bidder_leads``,
``thirty_for_sixty``, ``bidder_out_first``, ``max_deals``), with its errors.

State: card sets are int64 bitmasks (bit ``c`` = card ``c`` in pack order: suits S H D
C, A high to 2 low inside a suit). Observations are float32 ``(B, size)`` in exactly the
scalar env's layout (`parlour.envs.forty_fives.observation`), legal masks bool
``(B, 168)`` (the scalar env's action space: cards, then ``rob:X``, …), rewards float32
``(B, players)`` (the scalar env's rewards, rounded to float32), terminal flags bool
``(B,)``. A finished episode is dealt again at once from the engine's seeded generator
(automatic reset); so is the next deal of a match, inside the episode.
"""

from __future__ import annotations

from typing import Any

import torch

from ..forty_fives import observation as ff_observation
from ..forty_fives.rules import FortyFives
from ..forty_fives.state import Phase
from ..forty_fives.tables import (
    BID,
    DECK,
    DISCARD,
    DONE,
    HAND_SIZE,
    HOLD,
    KITTY,
    NUM_ACTIONS,
    PASS,
    PLAIN_MASK,
    PROTECTED,
    ROB,
    STOCK,
    STRENGTH,
    TRICK_POINTS,
    TRUMP,
    TRUMP_BASE,
    TRUMP_MASK,
)
from .base import CardBatchEngine, ForcedDeals, column

WORDS = 3  # 168 actions in three 64-bit words
BONUS_POINTS = 5
BIDDING, NAMING, DISCARDING, PLAYING = (
    int(Phase.BID),
    int(Phase.TRUMP),
    int(Phase.DISCARD),
    int(Phase.PLAY),
)


class FortyFivesBatch(CardBatchEngine):
    """``batch_size`` games of the Forty-Fives family stepped together.

    Args:
        batch_size: B, the number of games.
        players, variant, episode, target, void_must_trump, packets, bidder_leads,
            thirty_for_sixty, bidder_out_first, max_deals: the scalar env's options,
            same names, defaults and one-line errors.
        device, seed: see `BatchEngine`.

    Attributes (tensors of the current position, read-only for callers):
        to_play ``(B,)`` int64, the seat to act; dealer ``(B,)``; cards ``(B, 52)``
        the deal in the scalar engine's chance order; hands ``(B, players)``;
        scores ``(B, sides)``.

    Forced deals (`reset`): B dicts in the scalar env's format (``{"dealer": d,
    "hands": [[5 names] x players], "stock": [top first …]}``, ``stock[0]`` the
    turned card, each hand's first packet first, the auction's ``"kitty"``; the dealer
    is required, as in the scalar env) or an int array ``(B, 53)`` of the scalar
    engine's chance outcomes (dealer, then the 52 cards in deal order), as
    `FortyFives.forced_chance` gives them. Later deals of a match are drawn, the
    dealer passing to the left.
    """

    rules_class = FortyFives
    # the auction's tensors are kept, constant, in every variant
    state_tensors = (
        "cards dealer hands played_by put_away tricks_won trick lead in_trick best "
        "best_seat leader to_play trump trump_mask turned rob_seat robbed_by trick_no "
        "deal_points best_trump bonus_team scores deal_gain deal_no phase kitty "
        "stock_pos bid_high bid_winner passed bid_levels held bidder contract "
        "discard_pos discards drawn"
    ).split()

    def _build(self) -> None:
        rules = self.rules
        self.variant, self.episode = rules.variant, rules.episode
        self.target, self.max_deals = rules.target, rules.max_deals
        self.void_must_trump = rules.void_must_trump
        self.twenty_five = rules.twenty_five
        n = self.num_players
        self.num_sides = T = rules.num_teams
        self._set_pack(range(DECK.size))
        lay = ff_observation.Layout(rules)
        self._lay = lay
        self.stock_size = rules.stock_size
        B, dev, i64 = self.batch_size, self.device, torch.int64

        def table(x: Any) -> torch.Tensor:
            return torch.tensor(x, device=dev, dtype=i64)

        self._words: torch.Tensor | None = None  # legal_mask's, until the next move
        self._seats = torch.arange(n, device=dev)
        self._rot = table([[(q + k) % n for k in range(n)] for q in range(n)])
        self._sides = torch.arange(T, device=dev)
        self._suit_of = table(DECK.suit)
        self._rank_of = table(DECK.rank)
        self._strength = table(STRENGTH).flatten()  # [trump * 52 + card]
        self._protected = table(PROTECTED).flatten()  # [trump * 52 + led card]
        self._plain = table(PLAIN_MASK).flatten()  # [trump * 4 + suit led]
        self._trump_mask = table(TRUMP_MASK)
        self._team_of = table(rules.team_of)
        self._side_order = table(lay.sides)  # (n, T): sides as seat p lists them
        self._side_rel = table(lay.side_rel)  # (n, T): where side t is in p's list
        dest = [rules._dest[d] for d in range(n)]
        self._hand_pos = table(
            [
                [[i for i, w in enumerate(dest[d]) if w == s] for s in range(n)]
                for d in range(n)
            ]
        )  # (dealer, seat, 5): deal positions of the seat's cards, in order
        self._stock_pos = [i for i, w in enumerate(dest[0]) if w == STOCK]
        assert all(
            [i for i, w in enumerate(row) if w == STOCK] == self._stock_pos
            for row in dest
        )
        self._turned_pos = self._stock_pos[0]  # "deckt die oberste Karte auf"
        self._kitty_pos = [i for i, w in enumerate(dest[0]) if w == KITTY]
        self._stock_start = self._stock_pos[0]
        assert self._stock_pos == list(range(self._stock_start, DECK.size))
        self.auction = rules.auction
        self.bidder_leads = rules.bidder_leads
        self.thirty_for_sixty = rules.thirty_for_sixty
        self.bidder_out_first = rules.bidder_out_first
        self.cap = rules.cap
        # the refill's ``j``-th card from the top: deal position stock[stock_pos + j]
        self._draw_j = torch.arange(HAND_SIZE, device=dev)

        def zeros(*shape: int) -> torch.Tensor:
            return torch.zeros(B, *shape, device=dev, dtype=i64)

        self.cards = zeros(DECK.size)
        self.dealer = zeros()
        self.hands = zeros(n)
        self.played_by = zeros(n)
        self.put_away = zeros(n)  # the robber's buried card
        self.tricks_won = zeros(n)
        self.trick = zeros()  # cards of the current trick
        self.lead = zeros()  # the card led to this trick, -1 before the lead
        self.in_trick = zeros()  # cards played to this trick
        self.best = zeros()  # strength of the trick's winning card so far
        self.best_seat = zeros()
        self.leader = zeros()
        self.to_play = zeros()
        self.trump = zeros()
        self.trump_mask = zeros()
        self.turned = zeros()
        self.rob_seat = zeros()  # -1: nobody may rob (now)
        self.robbed_by = zeros()
        self.trick_no = zeros()
        self.deal_points = zeros(T)
        self.best_trump = zeros()  # -1: no trump played this deal
        self.bonus_team = zeros()
        self.scores = zeros(T)
        self.deal_gain = zeros(T)
        self.deal_no = zeros()
        self.phase = zeros()  # BIDDING, TRUMP, DISCARD or PLAY
        # the auction (constant in the other variants)
        self.kitty = zeros()
        self.stock_pos = zeros()  # cards drawn from the stock (refills)
        self.bid_high = zeros()  # 0, 15, 20, 25 or 30
        self.bid_winner = zeros()  # -1: nobody has bid
        self.passed = zeros()  # bit s: seat s has passed
        self.bid_levels = zeros(n)  # bit k: the seat bid level k
        self.held = zeros()  # times the dealer held
        self.bidder = zeros()  # -1 until the auction ends
        self.contract = zeros()
        self.discard_pos = zeros()  # how many seats have finished discarding
        self.discards = zeros(n)
        self.drawn = zeros(n)

    # --- dealing ----------------------------------------------------------------------
    def _restart(self, forced: ForcedDeals | None) -> None:
        # forced deals name their dealer (the packets depend on it): nothing drawn
        if forced is None:
            dealer, cards = self._draw_deals(self.batch_size)
        else:
            dealer, cards = forced.dealer, forced.cards[:, 0]
        everyone = torch.ones(self.batch_size, dtype=torch.bool, device=self.device)
        self._start(self._arange_b, dealer, cards, everyone)

    def _start(
        self,
        idx: torch.Tensor,
        dealer: torch.Tensor,
        cards: torch.Tensor,
        new_episode: torch.Tensor,
    ) -> None:
        """Games ``idx`` start a deal (``dealer``, ``cards`` in deal order); where
        ``new_episode``, a new match too (scores and deal count back to 0)."""
        self._words = None
        k, n = idx.numel(), self.num_players
        bits = self._one << cards
        pos = self._hand_pos.index_select(0, dealer).view(k, n * HAND_SIZE)
        # distinct bits: the sum is the union
        hands = bits.gather(1, pos).view(k, n, HAND_SIZE).sum(2)
        self.cards[idx] = cards
        self.dealer[idx] = dealer
        self.hands[idx] = hands
        first = self._mod(dealer + 1)
        self.leader[idx] = first
        self.to_play[idx] = first
        self.robbed_by[idx] = -1
        if self.auction:
            # "Nach dem Geben bietet man …": no turned card and no robbing; eldest
            # bids first.
            self.kitty[idx] = bits[:, self._kitty_pos].sum(1)
            self.phase[idx] = BIDDING
            for t in (self.trump, self.turned, self.rob_seat, self.bid_winner):
                t[idx] = -1
            self.bidder[idx] = -1
            for t in (self.trump_mask, self.stock_pos, self.bid_high, self.passed):
                t[idx] = 0
            for t in (self.held, self.contract, self.discard_pos):
                t[idx] = 0
            for t in (self.bid_levels, self.discards, self.drawn):
                t[idx] = 0
        else:
            # "Den Rest legt er verdeckt ab und deckt die oberste Karte auf. Ihre
            # Farbe ist … Trumpf."
            turned = cards[:, self._turned_pos]
            trump = self._suit_of.index_select(0, turned)
            self.phase[idx] = PLAYING
            self.turned[idx] = turned
            self.trump[idx] = trump
            self.trump_mask[idx] = self._trump_mask.index_select(0, trump)
            # "Wer das Trumpf-Ass hat, darf rauben … Ist die aufgedeckte Karte selbst
            # ein Ass, darf der Geber sie auf dieselbe Weise rauben." (Ace: rank 0.)
            ace = self._one << (trump * 13)
            holds = (hands & ace[:, None]) != 0
            holder = torch.where(holds.any(1), holds.long().argmax(1), -1)
            self.rob_seat[idx] = torch.where(
                self._rank_of.index_select(0, turned) == 0, dealer, holder
            )
        # "Der linke Nachbar des Gebers spielt zum ersten Stich aus" (base game)
        for t in (self.played_by, self.put_away, self.tricks_won, self.deal_points):
            t[idx] = 0
        for t in (self.trick, self.in_trick, self.best, self.best_seat, self.trick_no):
            t[idx] = 0
        for t in (self.lead, self.best_trump, self.bonus_team):
            t[idx] = -1
        self.deal_gain[idx] = 0
        keep = ~new_episode
        self.scores[idx] = torch.where(keep[:, None], self.scores[idx], 0)
        self.deal_no[idx] = torch.where(keep, self.deal_no[idx], 0)

    def deal(self, game: int) -> dict[str, Any]:
        """Game ``game``'s current deal in the scalar env's forced-deal format (pass it
        as ``env.reset(options={"deal": ...})`` to replay it there)."""
        cards = self.cards[game].tolist()
        dealer = int(self.dealer[game])
        name = DECK.format
        return {
            "dealer": dealer,
            "hands": [
                [name(cards[i]) for i in row] for row in self._hand_pos[dealer].tolist()
            ],
            "stock": [name(cards[i]) for i in self._stock_pos],
        } | (
            {"kitty": [name(cards[i]) for i in self._kitty_pos]} if self.auction else {}
        )

    def _mod(self, x: torch.Tensor) -> torch.Tensor:
        """``x % players`` (a mask when the count is a power of two: faster)."""
        n = self.num_players
        return x & (n - 1) if n & (n - 1) == 0 else x % n

    # --- legal actions ----------------------------------------------------------------
    def _legal_cards(self) -> torch.Tensor:
        """``(B,)`` bitmask of the cards the player to act may play."""
        hand = column(self.hands, self.to_play)
        leading = self.lead < 0
        lead = self.lead.clamp(min=0)
        tm = self.trump_mask
        trumps = hand & tm
        lead_trump = ((self._one << lead) & tm) != 0
        # "Trumpf wird ausgespielt: Du musst Trumpf zugeben … Trumpf-5, Trumpf-Bube und
        # A♥ darfst du behalten … Sind sie deine einzigen Trümpfe, darfst du
        # stattdessen eine beliebige Karte legen."
        trump = self.trump.clamp(min=0)  # -1 (not yet named) only off PLAY
        protected = self._protected.index_select(0, trump * 52 + lead)
        on_trump = torch.where((trumps & ~protected) != 0, trumps, hand)
        # "Nicht-Trumpf wird ausgespielt: Du musst bedienen … oder trumpfen"; void:
        # trump if void_must_trump, else anything.
        follow = hand & self._plain.index_select(
            0, trump * 4 + self._suit_of.index_select(0, lead)
        )
        void = trumps if self.void_must_trump else torch.zeros_like(trumps)
        on_plain = torch.where(
            follow != 0, follow | trumps, torch.where(void != 0, void, hand)
        )
        return torch.where(leading, hand, torch.where(lead_trump, on_trump, on_plain))

    def _legal_words(self) -> torch.Tensor:
        """``(B, 3)`` int64: the legal actions as bits of three 64-bit words."""
        cards = self._legal_cards()
        # "Geraubt wird, bevor du deine erste Karte spielst": rob:X for every X in the
        # hand, at the robber's first turn.
        rob = torch.where(
            self.rob_seat == self.to_play, column(self.hands, self.to_play), 0
        )
        low = rob & ((1 << (64 - ROB)) - 1)  # the rob bits that fit in word 0
        w0 = cards | low << ROB
        w1 = rob >> (64 - ROB)
        w2 = torch.zeros_like(w0)
        if self.auction:
            w0, w1, w2 = self._auction_words(w0, w1, w2)
        return torch.stack([w0, w1, w2], dim=1)

    def _auction_words(
        self, w0: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The legal-action words in the auction's phases (PASS is bit 41 of word 1,
        the bids 42-45, HOLD 46, the trumps 47-50, discard:c 51 + c, DONE bit 39 of
        word 2)."""
        phase, p = self.phase, self.to_play
        # bids above the high one: "bietet man 15, 20, 25 oder 30 Punkte"
        raises = (15 << (self.bid_high // 5 - 2).clamp(min=0)) & 15
        dealer = p == self.dealer
        # "passen alle, muss der Geber 15 spielen": no pass then; once there is a
        # bid, the dealer may also hold (take it at the high bid).
        may_pass = ~dealer | (self.bid_high > 0)
        bid = (
            may_pass.long() << (PASS - 64)
            | raises << (BID - 64)
            | (dealer & (self.bid_high > 0)).long() << (HOLD - 64)
        )
        hand = column(self.hands, p)
        count = self._hand_count(p)
        # never more discards than the stock can replace (rules-notes §1.3)
        left = self.stock_size - self.stock_pos
        may_discard = count - 1 + left >= HAND_SIZE
        d_hand = torch.where(may_discard, hand, 0)
        d1 = (d_hand & ((1 << (128 - DISCARD)) - 1)) << (DISCARD - 64)
        d2 = d_hand >> (128 - DISCARD) | (count <= HAND_SIZE).long() << (DONE - 128)
        in_play = phase == PLAYING
        w0 = torch.where(in_play, w0, 0)
        w1 = torch.where(
            in_play,
            w1,
            torch.where(
                phase == BIDDING,
                bid,
                torch.where(phase == NAMING, 15 << (TRUMP - 64), d1),
            ),
        )
        w2 = torch.where(phase == DISCARDING, d2, w2)
        return w0, w1, w2

    def _hand_count(self, p: torch.Tensor) -> torch.Tensor:
        """Cards in seat ``p``'s hand while discarding: 5, the bidder 8 (with the
        kitty), less his discards."""
        extra = torch.where(p == self.bidder, 3, 0)
        return HAND_SIZE + extra - column(self.discards, p)

    def legal_mask(self) -> torch.Tensor:
        """``(B, 168)`` bool: the legal actions of the player to act in each game."""
        # kept for `step`'s check: a trainer asks for the mask before every step
        self._words = self._legal_words()
        return self._unpack(self._words, NUM_ACTIONS)

    # --- play -------------------------------------------------------------------------
    def step(self, actions: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """Each game's player to act takes action ``actions[i]`` (a card, or
        ``rob:X`` at the robber's first turn; he then plays on).

        Returns ``(rewards, terminated)``: float32 ``(B, players)``, the scalar env's
        rewards at this step, and bool ``(B,)``. Terminated games and games whose deal
        ended inside a match are dealt again before this returns.
        """
        a = self._actions(actions)
        words = self._legal_words() if self._words is None else self._words
        self._words = None  # the position changes below
        inside = (a >= 0) & (a < NUM_ACTIONS)
        ac = a.clamp(0, NUM_ACTIONS - 1)
        ok = ((column(words, ac >> 6) >> (ac & 63)) & 1) != 0
        bad = ~(inside & ok)
        if bad.any():
            self._raise_illegal(a, bad)

        n = self.num_players
        p = self.to_play
        rob = ac >= ROB
        play = ~rob
        sel = self._seats == p[:, None]  # (B, n): the mover's column
        if self.auction:
            # The auction's moves change nothing the card play below reads; that
            # play is kept only where the game was in PLAY.
            in_play = self.phase == PLAYING
            self._auction_step(ac, p, sel)
            rob, play = rob & in_play, play & in_play
            sel = sel & in_play[:, None]
            ac = torch.where(in_play, ac, 0)
        card = torch.where(rob, ac - ROB, ac)
        bit = self._one << card
        # "eine beliebige Karte aus der Hand gegen die aufgedeckte Karte tauschen. Die
        # unerwünschte Karte kommt verdeckt unter den Stapel."
        gain = torch.where(rob, self._one << self.turned, 0)
        self.hands = torch.where(
            sel, (self.hands ^ bit[:, None]) | gain[:, None], self.hands
        )
        self.put_away = self.put_away | torch.where(sel & rob[:, None], bit[:, None], 0)
        self.robbed_by = torch.where(rob, p, self.robbed_by)
        # Robbing, or playing the first card ("sonst ist das Recht verfallen"), ends
        # the right.
        self.rob_seat = torch.where(self.rob_seat == p, -1, self.rob_seat)
        played = torch.where(play, bit, 0)
        self.played_by = self.played_by | torch.where(sel, played[:, None], 0)
        self.trick = self.trick | played

        # "Der höchste Trumpf gewinnt den Stich; liegt kein Trumpf, gewinnt die höchste
        # Karte der ausgespielten Farbe." The best card so far is kept at every play.
        leading = self.lead < 0
        lead = torch.where(leading, card, self.lead)
        tm = self.trump_mask
        lead_trump = ((self._one << lead) & tm) != 0
        trump = self.trump.clamp(min=0)
        follow = torch.where(
            lead_trump,
            tm,
            self._plain.index_select(
                0, trump * 4 + self._suit_of.index_select(0, lead)
            ),
        )
        strength = self._strength.index_select(0, trump * 52 + card)
        counts = leading | ((bit & (tm | follow)) != 0)
        better = play & counts & (leading | (strength > self.best))
        self.best = torch.where(better, strength, self.best)
        self.best_seat = torch.where(better, p, self.best_seat)
        self.lead = torch.where(play, lead, self.lead)
        self.in_trick = self.in_trick + play
        moved = self._mod(p + 1)
        if self.auction:
            moved = torch.where(play, moved, self.to_play)
        self.to_play = torch.where(rob, p, moved)

        # The trick is complete: "danach jeweils der Gewinner des letzten Stichs".
        done_trick = self.in_trick == n
        winner = self.best_seat
        team = self._team_of.index_select(0, winner)
        won = (self._seats == winner[:, None]) & done_trick[:, None]
        self.tricks_won = self.tricks_won + won
        side = (self._sides == team[:, None]) & done_trick[:, None]  # (B, T)
        self.deal_points = self.deal_points + TRICK_POINTS * side
        # The highest trump of a trick always wins it, so its side holds the bonus.
        top = done_trick & (self.best >= TRUMP_BASE) & (self.best > self.best_trump)
        self.best_trump = torch.where(top, self.best, self.best_trump)
        self.bonus_team = torch.where(top, team, self.bonus_team)
        self.trick = torch.where(done_trick, 0, self.trick)
        self.lead = torch.where(done_trick, -1, self.lead)
        self.in_trick = torch.where(done_trick, 0, self.in_trick)
        self.trick_no = self.trick_no + done_trick
        self.leader = torch.where(done_trick, winner, self.leader)
        self.to_play = torch.where(done_trick, winner, self.to_play)
        return self._score(done_trick, side)

    def _auction_step(
        self, a: torch.Tensor, p: torch.Tensor, sel: torch.Tensor
    ) -> None:
        """Bids, naming trumps and discards, for the games in those phases."""
        n, phase = self.num_players, self.phase
        one = self._one
        # --- bidding: a pass is final; a bid raises; the dealer's hold takes the
        # high bid.
        bidding = phase == BIDDING
        is_pass = bidding & (a == PASS)
        is_hold = bidding & (a == HOLD)
        is_bid = bidding & (a >= BID) & (a < HOLD)
        level = (a - BID).clamp(0, 3)
        self.passed = self.passed | torch.where(is_pass, one << p, 0)
        self.bid_winner = torch.where(is_hold | is_bid, p, self.bid_winner)
        self.held = self.held + is_hold
        self.bid_high = torch.where(is_bid, 15 + 5 * level, self.bid_high)
        self.bid_levels = self.bid_levels | torch.where(
            sel & is_bid[:, None], (one << level)[:, None], 0
        )
        active = ((self.passed[:, None] >> self._seats) & 1) == 0  # (B, n)
        alone = active.sum(1) == 1
        won = bidding & alone & (active.long().argmax(1) == self.bid_winner)
        # "Wer das Höchstgebot hat, bestimmt den Trumpf"
        self.bidder = torch.where(won, self.bid_winner, self.bidder)
        self.contract = torch.where(won, self.bid_high, self.contract)
        # the next seat to the left that has not passed
        later = self._rot.index_select(0, self._mod(p + 1))  # (B, n): seats after p
        free = ((self.passed[:, None] >> later) & 1) == 0
        nxt = column(later, free.long().argmax(1))
        to_play = torch.where(bidding, torch.where(won, self.bid_winner, nxt), p)
        phase_next = torch.where(won, NAMING, phase)
        # --- naming trumps: the bidder "nimmt eine Kitty aus 3 zusätzlich verdeckt
        # gegebenen Karten auf"; then everyone discards in turn from the dealer's
        # left.
        naming = phase == NAMING
        suit = (a - TRUMP).clamp(0, 3)
        self.trump = torch.where(naming, suit, self.trump)
        self.trump_mask = torch.where(
            naming, self._trump_mask.index_select(0, suit), self.trump_mask
        )
        take = naming[:, None] & (self._seats == self.bidder[:, None])
        self.hands = self.hands | torch.where(take, self.kitty[:, None], 0)
        self.kitty = torch.where(naming, 0, self.kitty)
        first = self._mod(self.dealer + 1)
        to_play = torch.where(naming, first, to_play)
        phase_next = torch.where(naming, DISCARDING, phase_next)
        # --- discarding: one card at a time, then "done" and the refill: "der Geber
        # füllt alle Hände vom Stapel auf 5 Karten auf".
        discarding = phase == DISCARDING
        done = discarding & (a == DONE)
        drop = discarding & ~done
        dbit = one << (a - DISCARD).clamp(0, 51)
        mine = sel & drop[:, None]
        self.hands = torch.where(mine, self.hands ^ dbit[:, None], self.hands)
        self.put_away = self.put_away | torch.where(mine, dbit[:, None], 0)
        self.discards = self.discards + mine
        need = torch.where(done, HAND_SIZE - self._hand_count(p), 0)
        at = (self._stock_start + self.stock_pos[:, None] + self._draw_j).clamp(max=51)
        draw = (one << self.cards.gather(1, at)) * (self._draw_j < need[:, None])
        self.hands = self.hands | torch.where(sel, draw.sum(1)[:, None], 0)
        self.stock_pos = self.stock_pos + need
        self.drawn = torch.where(sel & done[:, None], need[:, None], self.drawn)
        self.discard_pos = self.discard_pos + done
        all_done = done & (self.discard_pos == n)
        # "Der Bieter spielt aus." (bidder_leads=False: the player on his left)
        leader = self.bidder if self.bidder_leads else self._mod(self.bidder + 1)
        self.leader = torch.where(all_done, leader, self.leader)
        to_play = torch.where(
            discarding,
            torch.where(
                all_done,
                leader,
                torch.where(done, self._mod(self.dealer + 1 + self.discard_pos), p),
            ),
            to_play,
        )
        self.phase = torch.where(all_done, PLAYING, phase_next)
        self.to_play = to_play

    def _score(
        self, done_trick: torch.Tensor, side: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Score finished deals and matches, pay the rewards, deal again."""
        T = self.num_sides
        winner = torch.full_like(done_trick, -1, dtype=torch.int64)
        if self.twenty_five:
            # "wer zuerst 25 hat, gewinnt sofort, auch mitten im Spiel"
            self.scores = self.scores + TRICK_POINTS * side
            self.deal_gain = self.deal_gain + TRICK_POINTS * side
            reached = side & (self.scores >= self.target)
            out25 = reached.any(1)
            winner = torch.where(out25, reached.long().argmax(1), winner)
            deal_over = done_trick & ((self.trick_no == HAND_SIZE) | out25)
        else:
            out25 = torch.zeros_like(done_trick)
            deal_over = done_trick & (self.trick_no == HAND_SIZE)
            # "Der Stich mit dem höchsten Trumpf … bringt 5 Punkte extra." "Legt im
            # ganzen Spiel niemand einen Trumpf, gibt es keinen Bonus"
            bonus = (self._sides == self.bonus_team[:, None]) * BONUS_POINTS
            gain = self.deal_points + bonus
            if self.auction:
                gain = self._auction_gains(gain)
            gain = torch.where(deal_over[:, None], gain, 0)
            self.scores = self.scores + gain
            self.deal_gain = self.deal_gain + gain
        self.deal_no = self.deal_no + deal_over
        if self.episode == "deal":
            done = deal_over
            # each side's score change minus the mean change of all sides
            gain = self.deal_gain.double()
            value = gain - gain.sum(1, keepdim=True) / T
            seat_value = value.gather(1, self._team_of.expand(value.shape[0], -1))
            rewards = torch.where(done[:, None], seat_value, 0.0)
        else:
            # "Die Partei, die zuerst 45 Punkte erreicht, gewinnt. Kommen zwei Parteien
            # im selben Spiel darüber, gewinnt die mit der höheren Punktzahl." A tie at
            # the top plays another deal; at the deal limit the leader wins, a shared
            # lead is a draw.
            top = self.scores.max(1).values
            leaders = self.scores == top[:, None]
            alone = leaders.sum(1) == 1
            limit = self.deal_no >= self.max_deals
            settled = deal_over & ~out25 & (((top >= self.target) & alone) | limit)
            winner = torch.where(
                settled, torch.where(alone, leaders.long().argmax(1), -1), winner
            )
            if self.auction and self.bidder_out_first:
                # Hoyle: the bidding side "counts out first"
                bidding = self._team_of.index_select(0, self.bidder.clamp(min=0))
                out = deal_over & (column(self.scores, bidding) >= self.target)
                settled = settled | out
                winner = torch.where(out, bidding, winner)
            done = out25 | settled
            lose = -1.0 / (T - 1)
            mine = self._team_of[None, :] == winner[:, None]  # (B, n)
            value = torch.where(mine, 1.0, lose).double()
            rewards = torch.where(done[:, None] & (winner >= 0)[:, None], value, 0.0)
        rewards = rewards.to(torch.float32)
        if deal_over.any():
            idx = deal_over.nonzero().squeeze(1)
            dealer, cards = self._draw_deals(idx.numel())
            new = done[idx]
            # "Danach gibt reihum der linke Nachbar."
            dealer = torch.where(new, dealer, self._mod(self.dealer[idx] + 1))
            self._start(idx, dealer, cards, new)
        return rewards, done

    def _auction_gains(self, taken: torch.Tensor) -> torch.Tensor:
        """``(B, T)`` score changes of an auction deal from the points ``taken``,
        the 110 cap applied."""
        side = self._team_of.index_select(0, self.bidder.clamp(min=0))
        col = self._sides == side[:, None]
        mine = column(taken, side)
        contract = self.contract
        # "erreicht die Partei des Bieters ihr Gebot nicht, wird es stattdessen
        # abgezogen"; Hoyle's option: a made 30 counts 60.
        made = mine
        if self.thirty_for_sixty:
            made = torch.where(contract == 30, 60, mine)
        bid_gain = torch.where(mine >= contract, made, -contract)
        gain = torch.where(col, bid_gain[:, None], taken)
        if self.cap is not None:
            # "über 105 kommt nur, wer gerade Bieter ist": the others stop at 105.
            old = self.scores
            capped = torch.minimum(old + gain, old.clamp(min=self.cap)) - old
            gain = torch.where(col, gain, capped)
        return gain

    # --- observation ------------------------------------------------------------------
    def observe(self, seat: int | torch.Tensor | None = None) -> torch.Tensor:
        """float32 ``(B, observation_size)``: the scalar env's observation of ``seat``
        (an int or a ``(B,)`` tensor; default the player to act) in every game."""
        B, n, T = self.batch_size, self.num_players, self.num_sides
        p = self._seat(seat)
        lay = self._lay
        seats = self._rot.index_select(0, p)  # (B, n): seat k places to my left
        F = lay.flags
        one = self._one

        def relative(x: torch.Tensor) -> torch.Tensor:
            return self._mod(x - p)

        to_act = self.to_play == p
        phase = self.phase
        in_play = phase == PLAYING
        lo = (
            one << 9 + relative(self.dealer)
            | torch.where(to_act & (self.rob_seat == p), one << 4, 0)
            | torch.where(
                self.robbed_by >= 0, one << (9 + 2 * n + relative(self.robbed_by)), 0
            )
        )
        if self.auction:
            lo = (
                lo
                | torch.where(self.trump >= 0, one << self.trump.clamp(min=0), 0)
                # the phase flags F+5 .. F+8: bidding, naming trumps, discarding, play
                | one << torch.where(in_play, 8, phase + 3)
                | torch.where(in_play, one << (9 + n + relative(self.leader)), 0)
            )
        else:
            leader = one << 9 + n + relative(self.leader)
            lo = lo | one << self.trump | one << 8 | leader
        # Flags that may lie past bit 63 (with 5 or 6 players): (value, bit, width).
        far = [
            (to_act.long(), lay.to_act - F, 1),
            (
                (self.bonus_team >= 0).long(),
                lay.bonus
                - F
                + column(
                    self._side_rel.index_select(0, p), self.bonus_team.clamp(min=0)
                ),
                1,
            ),
        ]
        if self.auction:
            # The auction's public facts (all zero before the first call).
            has_bidder = (self.bidder >= 0).long()
            passed = (self.passed[:, None] >> seats) & 1  # (B, n), my order
            levels = self.bid_levels.gather(1, seats)
            far += [
                (has_bidder, lay.bidder - F + relative(self.bidder), 1),
                (has_bidder, lay.contract - F + (self.contract // 5 - 3).clamp(0), 1),
                (
                    ((phase == BIDDING) & (self.bid_winner >= 0)).long(),
                    lay.high - F + relative(self.bid_winner),
                    1,
                ),
                ((passed << self._seats).sum(1), lay.passed - F, n),
                ((levels << 4 * self._seats).sum(1), lay.levels - F, 4 * n),
                ((self.held > 0).long(), lay.held - F, 1),
                (
                    (self.bid_high > 0).long(),
                    lay.high_bid - F + (self.bid_high // 5 - 3).clamp(0),
                    1,
                ),
            ]
        two = lay.nbits - F > 64
        hi = torch.zeros_like(lo)
        for value, pos, _width in far:
            if not two:
                lo = lo | value << pos
                continue
            pos = torch.as_tensor(pos, device=self.device)
            lo = lo | torch.where(pos < 64, value << pos.clamp(max=63), 0)
            hi = hi | torch.where(
                pos >= 64,
                value << (pos - 64).clamp(0, 63),
                value >> (64 - pos).clamp(0, 63),
            )
        cards = torch.cat(
            [
                column(self.hands, p)[:, None],
                self.played_by.gather(1, seats),
                self.trick[:, None],
                torch.where(self.turned >= 0, one << self.turned.clamp(min=0), 0)[
                    :, None
                ],
                column(self.put_away, p)[:, None],
            ],
            dim=1,
        )
        nflag = lay.nbits - F
        out = torch.empty(B, self.observation_size, device=self.device)
        self._write_bits(out, 0, cards, 52)
        self._write_bits(out, F, lo[:, None], min(nflag, 64))
        if two:
            self._write_bits(out, F + 64, hi[:, None], nflag - 64)
        # The scalars, in float64 and rounded once to float32, as the scalar env.
        target = self.target
        order = self._side_order.index_select(0, p)  # (B, T)
        scores = self.scores.gather(1, order).double()
        points = self.deal_points.gather(1, order).double()
        tricks = self.tricks_won.gather(1, seats).double()
        s = lay.nbits
        out[:, s : s + T] = ((scores + target) / (2 * target)).clamp(0.0, 1.0)
        out[:, s + T : s + 2 * T] = points / 30
        out[:, s + 2 * T : s + 2 * T + n] = tricks / 5
        if self.auction:
            discards = self.discards.gather(1, seats).double()
            drawn = self.drawn.gather(1, seats).double()
            out[:, s + 2 * T + n : s + 2 * T + 2 * n] = discards / 8
            out[:, s + 2 * T + 2 * n : s + 2 * T + 3 * n] = drawn / 5
            left = (self.stock_size - self.stock_pos).double()
            out[:, s + 2 * T + 3 * n] = left / 52
        else:
            out[:, s + 2 * T + n : s + 2 * T + 3 * n] = 0.0
            out[:, s + 2 * T + 3 * n] = self.stock_size / 52
        deals = self.deal_no.double() / self.max_deals
        out[:, s + 2 * T + 3 * n + 1] = deals.clamp(max=1.0)
        return out
