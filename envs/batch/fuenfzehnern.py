"""Fünfzehnern for B games at once, as torch tensors (batch first).

The rules are those of the scalar engine `parlour.envs.fuenfzehnern.rules` (seed
*How to Play Fünfzehnern*, ``docs/games/fuenfzehnern.md``); this module only
re-expresses them as array operations, and ``tests/test_batch_fuenfzehnern.py`` checks
that both play the same game move by move. Every card play costs the same fixed list of
tensor operations whatever the games' positions, so the cost per play falls with B.

State: card sets are int64 bitmasks over the 32 ids of the German pack (suits S H D C,
A K Q J 10 9 8 7 inside a suit, so a lower id in a suit is a higher card), per game or
per game and seat. The capture chain is kept as the time of each suit's latest capture
(``cap_time (B, 4)``, 0 = never): the lead rules only ask which suits were captured
and in which order they were last captured, which the times give directly. Actions are
the scalar env's 36 ids (32 cards, then Zwang in S H D C); observations float32
``(B, 32 (4 + P) + 9P + 38)`` in exactly the scalar env's layout
(`parlour.envs.fuenfzehnern.observation`), legal masks bool ``(B, 36)``, rewards float32
``(B, P)`` (the game points each seat gets at that step, as the scalar env pays them),
terminal flags bool ``(B,)``. A finished episode is dealt again at once from the
engine's seeded generator (automatic reset); so is the next deal of a match, inside the
episode, the deal passing clockwise.
"""

from __future__ import annotations

from typing import Any

import torch

from ..fuenfzehnern.observation import bits_size
from ..fuenfzehnern.rules import (
    ACE,
    BASELINE,
    CARD_POINTS,
    HAND_SIZE,
    KING,
    NUM_ACTIONS,
    NUM_CARDS,
    OBER,
    SUIT_MASK,
    TYING_POINTS,
    ZWANG,
    Fuenfzehnern,
)
from .base import CardBatchEngine, ForcedDeals, column

# bit 8s of a mask, for each suit s: where the Ober/King tests of Zwang land
_SUIT_BASE_BITS = 0x01010101


class FuenfzehnernBatch(CardBatchEngine):
    """``batch_size`` games of Fünfzehnern stepped together.

    Args:
        batch_size: B, the number of games.
        players, removed_suit, lead_rules, unbeatable_duty_on_first_suit,
            tying_scoring, episode, num_hands: the scalar env's options, with its
            defaults and its one-line errors; every combination the scalar env
            accepts is covered.
        device, seed: see `BatchEngine`.

    Attributes (tensors of the current position, read-only for callers):
        to_play: ``(B,)`` int64, the seat to act in each game. ``dealer``: ``(B,)``.
        ``cards``: ``(B, 8P)`` int64, the deal in the scalar engine's chance order (the
        k-th card to seat k mod P). ``scores``: ``(B, P)`` game points of the finished
        deals of the episode.

    Forced deals (`reset`): B dicts in the scalar env's format (``{"dealer": d,
    "hands": [[8 names] × P]}``, ``dealer`` optional: then drawn) or an int array
    ``(B, 1 + 8P)`` of the scalar engine's chance outcomes per game (dealer, then the
    cards in deal order, the k-th to seat k mod P), as `Fuenfzehnern.forced_chance`
    gives them for one deal. In a match these are the first deals; later ones are
    drawn, the deal passing clockwise.
    """

    rules_class = Fuenfzehnern
    state_tensors = (
        "cards hands played_by voids points tricks scores cap_time captures played "
        "table trick_points lead_card trick_len best winner zwang zwang_suits dealer "
        "leader to_play deal_no"
    ).split()

    def _build(self) -> None:
        rules = self.rules
        P = self.num_players
        self.num_hands = rules.num_hands
        self.strict = rules.strict
        self.duty_on_first = rules.duty_on_first
        self.tying_scoring = rules.tying_scoring
        self.match_episode = rules.episode == "match"
        self.in_play = rules.in_play
        self.total_points = rules.total_points
        self.n_cards = HAND_SIZE * P
        self._head = bits_size(P)
        B, dev, i64 = self.batch_size, self.device, torch.int64
        self._seats = torch.arange(P, device=dev)
        self._suits = torch.arange(4, device=dev)
        self._suit_masks = torch.tensor(SUIT_MASK, device=dev, dtype=i64)
        self._points_of = torch.tensor(CARD_POINTS, device=dev, dtype=i64)
        self._set_pack([c for c in range(NUM_CARDS) if self.in_play >> c & 1])

        def zeros(*shape: int) -> torch.Tensor:
            return torch.zeros(B, *shape, device=dev, dtype=i64)

        self.cards = zeros(self.n_cards)
        self.hands = zeros(P)
        self.played_by = zeros(P)
        self.voids = zeros(P)  # suit bits: the seat failed to follow that suit
        self.points = zeros(P)  # card points taken this deal
        self.tricks = zeros(P)  # tricks won this deal
        self.scores = zeros(P)  # game points of the finished deals
        self.cap_time = zeros(4)  # capture number of each suit's latest capture
        self.captures = zeros()
        self.played = zeros()
        self.table = zeros()  # the cards of the current trick
        self.trick_points = zeros()  # their card points
        self.lead_card = zeros()  # the card led to the current trick (if any)
        self.trick_len = zeros()
        self.best = zeros()  # the best card of the led suit in the current trick
        self.winner = zeros()  # its seat
        self.zwang = zeros()  # suit announced with Zwang on this trick, else -1
        self.zwang_suits = zeros()
        self.dealer = zeros()
        self.leader = zeros()
        self.to_play = zeros()
        self.deal_no = zeros()  # deals finished in this episode
        self._legal: torch.Tensor | None = None  # cached; None once play moved on

    # --- dealing ----------------------------------------------------------------------
    def _restart(self, forced: ForcedDeals | None) -> None:
        dealer, cards = self._dealt(forced)
        self.scores.zero_()
        self.deal_no.zero_()
        self._start(self._arange_b, dealer, cards)

    def _start(
        self, idx: torch.Tensor, dealer: torch.Tensor, cards: torch.Tensor
    ) -> None:
        """Games ``idx`` start play on the deal (``dealer``, ``cards``)."""
        P = self.num_players
        bits = self._one << cards
        # the k-th card goes to seat k mod P; distinct bits, so the sum is the union
        self.hands[idx] = bits.view(-1, HAND_SIZE, P).sum(1)
        self.cards[idx] = cards
        self.dealer[idx] = dealer
        # "The player to the immediate left of the dealer leads the first card"
        eldest = (dealer + 1) % P
        self.leader[idx] = eldest
        self.to_play[idx] = eldest
        for t in (
            self.played_by,
            self.voids,
            self.points,
            self.tricks,
            self.cap_time,
            self.captures,
            self.played,
            self.table,
            self.trick_points,
            self.trick_len,
            self.lead_card,
            self.best,
            self.winner,
            self.zwang_suits,
        ):
            t[idx] = 0
        self.zwang[idx] = -1
        self._legal = None

    def deal(self, game: int) -> dict[str, Any]:
        """Game ``game``'s current deal in the scalar env's forced-deal format (pass it
        as ``env.reset(options={"deal": ...})`` to replay it there)."""
        P = self.num_players
        cards = self.cards[game].tolist()
        name = self.rules.deck.format
        return {
            "dealer": int(self.dealer[game]),
            "hands": [[name(c) for c in cards[s::P]] for s in range(P)],
        }

    # --- rules ------------------------------------------------------------------------
    def _unbeatable(self, cards: torch.Tensor, others: torch.Tensor) -> torch.Tensor:
        """The cards in ``cards`` no card in ``others`` beats (`Fuenfzehnern.
        unbeatable`): in each suit, those above the rivals' best card."""
        held = cards[:, None] & self._suit_masks
        rivals = others[:, None] & self._suit_masks
        below = torch.where(rivals != 0, (rivals & -rivals) - 1, -1)
        return (held & below).sum(1)  # suits disjoint: the sum is the union

    def _lead_info(
        self, hand: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """For a leader holding ``hand``: the cards he may lead, the suit he must lead
        (-1 if free) and the cards of that suit he holds (`Fuenfzehnern.lead_mask`,
        `required_suit`)."""
        others = self.in_play & ~self.played & ~hand
        holds = (hand[:, None] & self._suit_masks) != 0  # (B, 4)
        captured = self.cap_time > 0
        top = self.cap_time.argmax(1)  # the latest capture suit
        if self.strict:
            # "must lead … the same suit as that which the player was able to capture
            # the lead", else the suit captured before it, and so on back through the
            # chain: the held suit captured most recently.
            key = torch.where(captured & holds, self.cap_time, 0)
            need = key.argmax(1)
            bound = (key > 0).any(1)
        else:
            # Relaxed: "he still must lead a card of the same suit on which the trick
            # was won"
            need = top
            bound = captured.any(1) & holds.gather(1, top[:, None]).squeeze(1)
        held = hand & self._suit_masks[need]
        if self.strict:
            # "the player must also play an unbeatable card in this suit (if he has
            # such a card)" (on the first capture suit too unless
            # unbeatable_duty_on_first_suit=False)
            unb = self._unbeatable(held, others)
            duty = unb != 0
            if not self.duty_on_first:
                duty &= need != top
            lead = torch.where(duty, unb, held)
        else:
            # "if the leader has unbeatable cards … he may opt to play those first"
            lead = held | self._unbeatable(hand, others)
        # No capture yet, or out of every suit the rules name: any card.
        lead = torch.where(bound, lead, hand)
        return lead, torch.where(bound, need, -1), held

    def _legal_bits(self) -> torch.Tensor:
        """Legal actions as bits (0-31 cards, 32-35 Zwang) of the player to act (the
        position's legal_mask and step both need them: computed once)."""
        if self._legal is None:
            self._legal = self._compute_legal_bits()
        return self._legal

    def _compute_legal_bits(self) -> torch.Tensor:
        hand = column(self.hands, self.to_play)
        lead, _, _ = self._lead_info(hand)
        # Zwang: "having both the King and Queen of the same suit, and is legally able
        # to lead that suit, may lead the Queen" (the Ober a legal lead, the King held)
        x = (lead >> OBER) & (hand >> KING) & _SUIT_BASE_BITS
        zw = (x & 1) | (x >> 7 & 2) | (x >> 14 & 4) | (x >> 21 & 8)
        lead = lead | zw << ZWANG
        # "The player who has the Ace of that same suit must play it"
        ace = self._one << (8 * self.zwang.clamp(min=0) + ACE)
        forced = (self.zwang >= 0) & ((hand & ace) != 0)
        # "must play a card of the suit originally led … If a player has no cards in
        # the suit originally led to the trick, the player may play a card from any
        # suit"
        follow = hand & self._suit_masks[self.lead_card >> 3]
        follow = torch.where(follow != 0, follow, hand)
        follow = torch.where(forced, ace, follow)
        return torch.where(self.trick_len == 0, lead, follow)

    def legal_mask(self) -> torch.Tensor:
        """``(B, 36)`` bool: the legal actions of the player to act in each game."""
        return self._unpack(self._legal_bits()[:, None], NUM_ACTIONS)

    def step(self, actions: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """Each game's player to act takes action ``actions[i]`` (a card id, or
        ``32 + s`` to lead the Ober of suit s announcing Zwang).

        Returns ``(rewards, terminated)``: float32 ``(B, P)`` (a deal's game points at
        the play that ends it, else 0) and bool ``(B,)``. Terminated games are dealt
        again before this returns (their next observation is the new deal's).
        """
        P = self.num_players
        a = self._actions(actions)
        legal = self._legal_bits()
        inside = (a >= 0) & (a < NUM_ACTIONS)
        abit = self._one << a.clamp(0, NUM_ACTIONS - 1)
        bad = ~inside | ((abit & legal) == 0)
        if bad.any():
            self._raise_illegal(a, bad)

        announce = a >= ZWANG
        card = torch.where(announce, 8 * (a - ZWANG) + OBER, a)
        bit = self._one << card
        suit = card >> 3
        p = self.to_play
        sel = self._seats == p[:, None]  # (B, P): the mover's column
        # only the mover held the card: masking every seat's column is the same
        self.hands = self.hands & ~bit[:, None]
        self.played_by = self.played_by | torch.where(sel, bit[:, None], 0)
        self.played = self.played | bit
        leading = self.trick_len == 0
        lead_card = torch.where(leading, card, self.lead_card)
        led = lead_card >> 3
        self.lead_card = lead_card
        self.zwang = torch.where(leading, torch.where(announce, suit, -1), self.zwang)
        self.zwang_suits = self.zwang_suits | torch.where(
            leading & announce, self._one << suit, 0
        )
        failed = ~leading & (suit != led)
        self.voids = self.voids | torch.where(
            sel & failed[:, None], (self._one << led)[:, None], 0
        )
        self.table = self.table | bit
        self.trick_points = (
            torch.where(leading, 0, self.trick_points) + self._points_of[card]
        )
        # "the trick won by the highest card played to it in the suit originally led";
        # a lower id in a suit is a higher card
        better = leading | ((suit == led) & (card < self.best))
        self.best = torch.where(better, card, self.best)
        self.winner = torch.where(better, p, self.winner)
        self.trick_len = self.trick_len + 1
        self.to_play = (p + 1) % P

        # The trick ends for the games where this was its P-th card.
        done = self.trick_len == P
        winner, leader = self.winner, self.leader
        wsel = (self._seats == winner[:, None]) & done[:, None]
        self.points = self.points + torch.where(wsel, self.trick_points[:, None], 0)
        self.tricks = self.tricks + wsel
        # A capture: the winner took the lead in the led suit; it joins the chain.
        capture = done & (winner != leader)
        self.captures = self.captures + capture
        self.cap_time = torch.where(
            capture[:, None] & (self._suits == led[:, None]),
            self.captures[:, None],
            self.cap_time,
        )
        # "The winner of each trick then leads"
        self.leader = torch.where(done, winner, leader)
        self.to_play = torch.where(done, winner, self.to_play)
        self.table = torch.where(done, 0, self.table)
        self.trick_len = torch.where(done, 0, self.trick_len)
        self.zwang = torch.where(done, -1, self.zwang)
        self._legal = None
        return self._end_deals()

    def _end_deals(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Score the deals played out, end the episodes that are over, deal the next
        deal of a match (the deal passing clockwise) or a new episode."""
        deal_over = self.played == self.in_play
        # "For each card point a player managed to capture over 15 … earns one game
        # point. For each card point under 15 … loses one Game Point."
        result = self.points - BASELINE
        if self.tying_scoring:
            # "each of these two players was awarded 15 Game Points, and the two
            # players who won no tricks during the hand each lose 15 Game Points"
            won = self.tricks > 0
            tying = won.sum(1) == 2
            result = torch.where(
                tying[:, None], torch.where(won, TYING_POINTS, -TYING_POINTS), result
            )
        result = torch.where(deal_over[:, None], result, 0)
        rewards = result.to(torch.float32)
        self.scores = self.scores + result
        self.deal_no = self.deal_no + deal_over
        done = deal_over & (self.deal_no >= self.num_hands)
        if deal_over.any():
            idx = deal_over.nonzero().squeeze(1)
            dealer, cards = self._draw_deals(idx.numel())
            new_episode = done[idx]
            # "thereafter the deal of each hand proceeds in a clockwise direction"
            dealer = torch.where(
                new_episode, dealer, (self.dealer[idx] + 1) % self.num_players
            )
            self.scores[idx] = torch.where(new_episode[:, None], 0, self.scores[idx])
            self.deal_no[idx] = torch.where(new_episode, 0, self.deal_no[idx])
            self._start(idx, dealer, cards)
        return rewards, done

    # --- observation ------------------------------------------------------------------
    def observe(self, seat: int | torch.Tensor | None = None) -> torch.Tensor:
        """float32 ``(B, observation_size)``: the scalar env's observation of ``seat``
        (an int or a ``(B,)`` tensor; default the player to act) in every game."""
        B, P = self.batch_size, self.num_players
        p = self._seat(seat)
        order = (p[:, None] + self._seats) % P  # relative seats: me, my left, …
        hand = column(self.hands, p)
        others = self.in_play & ~self.played & ~hand
        in_trick = self.trick_len > 0
        led_bit = torch.where(in_trick, self._one << self.lead_card, 0)
        cards = torch.cat(
            [
                hand[:, None],
                self.played_by.gather(1, order),
                self.table[:, None],
                led_bit[:, None],
                self._unbeatable(hand, others)[:, None],
            ],
            dim=1,
        )  # (B, 4 + P) blocks of 32 bits
        # The rest of the 0/1 part, 6P + 36 <= 60 bits, in one int64 per game.
        tail = (self._one << (self.leader - p) % P) | (
            self._one << (P + (self.dealer - p) % P)
        )
        voids = self.voids.gather(1, order) << (2 * P + 4 * self._seats)
        tail = tail | voids.sum(1)
        V = 6 * P
        # the chain's distinct suits, most recent first: slot = how many suits were
        # captured later
        rank = (self.cap_time[:, None, :] > self.cap_time[:, :, None]).sum(2)
        chain = torch.where(
            self.cap_time > 0, self._one << (V + 4 * rank + self._suits), 0
        )
        tail = tail | chain.sum(1)
        mine = (self.to_play == p) & ~in_trick
        lead, need, held = self._lead_info(hand)
        bound = need >= 0
        flags = torch.where(bound, self._one << (V + 16 + need.clamp(min=0)), 0)
        if self.strict:
            flags = flags | torch.where(bound & (lead != held), 1 << (V + 22), 0)
        flags = flags | torch.where(bound, 0, 1 << (V + 21)) | (1 << (V + 20))
        tail = tail | torch.where(mine, flags, 0)
        tail = tail | torch.where(self.zwang >= 0, 1 << (V + 23), 0)
        tail = tail | self.zwang_suits << (V + 24) | self.rules.option_bits << (V + 28)

        n_card_bits = 32 * (4 + P)
        out = torch.empty(B, self.observation_size, device=self.device)
        n_tail = self._head - n_card_bits
        self._write_bits(out, 0, cards, 32)
        self._write_bits(out, n_card_bits, tail[:, None], n_tail)
        # The scalars as the scalar env computes them: float64 products, then float32.
        h = self.num_hands
        per_point = 1 / self.total_points
        per_score = per_point / h
        f64 = torch.float64
        F = self._head
        out[:, F : F + P] = (self.points.gather(1, order).to(f64) * per_point).float()
        out[:, F + P : F + 2 * P] = (
            self.tricks.gather(1, order).to(f64) * 0.125
        ).float()
        scores = self.scores.gather(1, order) + BASELINE * h
        out[:, F + 2 * P : F + 3 * P] = (scores.to(f64) * per_score).float()
        out[:, F + 3 * P] = (self.deal_no.to(f64) / h).float()
        out[:, F + 3 * P + 1] = (self.tricks.sum(1).to(f64) * 0.125).float()
        return out
