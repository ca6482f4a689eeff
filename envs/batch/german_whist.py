"""German Whist and Honeymoon Whist for B games at once, as torch tensors (what it
returns batch first).

The rules are those of the scalar engine `parlour.envs.german_whist.rules` (seed
*German Whist*, ``docs/games/german_whist.md``); this module only
re-expresses them as array operations, and ``tests/test_batch.py`` checks that both
play the same game move by move. Every card play costs the same fixed list of tensor
operations whatever the games' positions (tricks are resolved for every game and kept
with ``torch.where`` where a card followed), so the cost per play falls with B.

State: card sets are int64 bitmasks (bit ``c`` = card ``c`` in pack order, suits S H D
C, A high to 2 low inside a suit, so a lower id in a suit is a higher card; then JKH,
JKL in Honeymoon), per game or per seat and game. The per-seat state is held
seat-major, ``(2, B)``: torch's elementwise operations on ``(B, 2)`` tensors (a
two-element inner dimension) cost several times those on ``(2, B)`` ones on a CPU, and
a card play is mostly such operations. The ``(B, 2)`` attributes (``hands``, ``match``
…) are views of it. With ``n`` cards (52, or 54), observations are float32
``(B, 8n + 18)`` in exactly the scalar env's layout
(`parlour.envs.german_whist.observation`), legal masks bool ``(B, n)``, rewards float32
``(B, 2)`` (seat 0, seat 1; the scalar env's rewards), terminal flags bool ``(B,)``. A
finished episode is dealt again at once from the engine's seeded generator (automatic
reset); so is the next deal of a Honeymoon match, inside the episode.
"""

from __future__ import annotations

from typing import Any

import torch

from ..german_whist.rules import GermanWhist
from .base import CardBatchEngine, ForcedDeals

HAND_SIZE = 13
TRICKS_TO_WIN = 7  # "the game is decided as soon as a player has 7 of them"
STAGE2_TRICKS = 13
N_FLAGS = 11  # trump suit, opponent's voids, stage 2, to lead, dealer


def _pick(pair: torch.Tensor, first: torch.Tensor) -> torch.Tensor:
    """Seat 0's row of a seat-major ``(2, B)`` tensor where ``first``, else seat 1's
    (``torch.where`` on the two contiguous rows: cheaper than a gather)."""
    return torch.where(first, pair[0], pair[1])


class GermanWhistBatch(CardBatchEngine):
    """``batch_size`` games of German Whist stepped together.

    Args:
        batch_size: B, the number of games.
        variant: ``"german"`` (52 cards, one deal) or ``"honeymoon"`` (Honeymoon
            Whist: 54 cards, every trick counts).
        episode: Honeymoon only: ``"match"`` (default, deals with alternating dealer
            until a player has ``match_target`` match points; +1 / -1) or ``"deal"``
            (one deal; +/- the deal's match points), as the scalar env.
        match_target: match points that win a Honeymoon match (seed: 14).
        device, seed: see `BatchEngine`.

    Attributes (tensors of the current position, read-only for callers):
        to_play: ``(B,)`` int64, the seat to act in each game (0 or 1).
        dealer: ``(B,)`` int64. ``cards``: ``(B, n)`` int64, the deal in the scalar
        engine's chance order (hand 0, hand 1, stock from the top). ``match``:
        ``(B, 2)`` match points (Honeymoon).

    Forced deals (`reset`): B dicts in the scalar env's format (``{"dealer": d,
    "hands": [[13 names], [13 names]], "stock": [26 names (28 in Honeymoon), top
    first]}``, ``dealer`` optional: then drawn) or an int array ``(B, n + 1)`` of the
    scalar engine's chance outcomes per game (dealer, then the ``n`` cards in deal
    order), as `GermanWhist.forced_chance` gives them. In a Honeymoon match these are
    the first deals; later ones are drawn, the dealer alternating.
    """

    rules_class = GermanWhist
    state_tensors = (
        "cards _match _hands _seen _voids _tricks1 _tricks2 played stock_pos trump "
        "trump_mask dealer leader to_play lead"
    ).split()

    def _build(self) -> None:
        rules = self.rules
        self.variant, self.episode = rules.variant, rules.episode
        self.match_target = match_target = rules.match_target
        self.honeymoon = rules.honeymoon
        deck = rules.deck
        self.deck = deck
        n = self.num_actions
        self._set_pack(range(n))
        self.stock_size = rules.stock_size
        self._all = deck.all_mask
        B, dev, i64 = self.batch_size, self.device, torch.int64
        self._seats = torch.arange(2, device=dev)
        # suits 0..3 and 4 = the jokers (Honeymoon); card -> suit, card -> strength
        self._suit_masks = torch.tensor(deck.suit_mask, device=dev, dtype=i64)
        self._suit_of = torch.tensor(deck.suit, device=dev, dtype=i64)
        self._strength = torch.tensor(rules._strength, device=dev, dtype=i64)
        self._jokers = int(rules.jokers)
        self._suit_ids = torch.arange(4, device=dev)
        self._suit_masks4 = self._suit_masks[:4]
        # observe: what the stock left and each counter are divided by
        stage1_total = self.stock_size // 2
        self._divisors = torch.tensor(
            [
                self.stock_size,
                stage1_total,
                stage1_total,
                STAGE2_TRICKS,
                STAGE2_TRICKS,
                match_target,
                match_target,
            ],
            device=dev,
            dtype=torch.float32,
        )[:, None]
        # flat index of each game's first card in `cards` (take() beats gather())
        self._row_start = self._arange_b * n
        self.cards = torch.zeros(B, n, device=dev, dtype=i64)
        # per seat and game, seat-major (see the module docstring)
        self._match = torch.zeros(2, B, device=dev, dtype=i64)  # Honeymoon
        self._hands = torch.zeros(2, B, device=dev, dtype=i64)
        self._seen = torch.zeros(2, B, device=dev, dtype=i64)  # Seen rows
        self._voids = torch.zeros(2, B, device=dev, dtype=i64)  # suit bits
        self._tricks1 = torch.zeros(2, B, device=dev, dtype=i64)
        self._tricks2 = torch.zeros(2, B, device=dev, dtype=i64)
        self.played = torch.zeros(B, device=dev, dtype=i64)
        self.stock_pos = torch.zeros(B, device=dev, dtype=i64)
        self.trump = torch.zeros(B, device=dev, dtype=i64)
        self.trump_mask = torch.zeros(B, device=dev, dtype=i64)
        self.dealer = torch.zeros(B, device=dev, dtype=i64)
        self.leader = torch.zeros(B, device=dev, dtype=i64)
        self.to_play = torch.zeros(B, device=dev, dtype=i64)
        self.lead = torch.full((B,), -1, device=dev, dtype=i64)  # -1: nothing led
        # the legal cards of the position (legal_mask and the next step both need
        # them); None once the position changed
        self._legal: torch.Tensor | None = None

    # (B, 2) views of the seat-major state, one row a game
    @property
    def match(self) -> torch.Tensor:
        return self._match.T

    @property
    def hands(self) -> torch.Tensor:
        return self._hands.T

    @property
    def seen(self) -> torch.Tensor:
        return self._seen.T

    @property
    def voids(self) -> torch.Tensor:
        return self._voids.T

    @property
    def tricks1(self) -> torch.Tensor:
        return self._tricks1.T

    @property
    def tricks2(self) -> torch.Tensor:
        return self._tricks2.T

    # --- dealing ----------------------------------------------------------------------
    def _restart(self, forced: ForcedDeals | None) -> None:
        dealer, cards = self._dealt(forced)
        self._match.zero_()
        self._start(self._arange_b, dealer, cards)

    def _start(
        self, idx: torch.Tensor, dealer: torch.Tensor, cards: torch.Tensor
    ) -> None:
        """Games ``idx`` start play on the deal (``dealer``, ``cards``)."""
        bits = self._one << cards
        self._hands[:, idx] = torch.stack(
            [bits[:, :HAND_SIZE].sum(1), bits[:, HAND_SIZE : 2 * HAND_SIZE].sum(1)]
        )  # distinct bits: the sum is the union
        self.cards[idx] = cards
        self.dealer[idx] = dealer
        # "turn its top card face up. That card's suit is trumps for the whole deal."
        # Honeymoon: "If a Joker is turned up to set trumps, spades are trumps."
        trump = self._suit_of[cards[:, 2 * HAND_SIZE]] % 4  # joker (suit 4): spades
        self.trump[idx] = trump
        self.trump_mask[idx] = self._suit_masks[trump] | self._jokers
        # "The non-dealer leads the first trick."
        self.leader[idx] = 1 - dealer
        self.to_play[idx] = 1 - dealer
        self.lead[idx] = -1
        for t in (self._seen, self._voids, self._tricks1, self._tricks2):
            t[:, idx] = 0
        self.played[idx] = 0
        self.stock_pos[idx] = 0
        self._legal = None

    def deal(self, game: int) -> dict[str, Any]:
        """Game ``game``'s current deal in the scalar env's forced-deal format (pass it
        as ``env.reset(options={"deal": ...})`` to replay it there)."""
        cards = self.cards[game].tolist()
        name = self.deck.format
        return {
            "dealer": int(self.dealer[game]),
            "hands": [
                [name(c) for c in cards[:HAND_SIZE]],
                [name(c) for c in cards[HAND_SIZE : 2 * HAND_SIZE]],
            ],
            "stock": [name(c) for c in cards[2 * HAND_SIZE :]],
        }

    # --- play -------------------------------------------------------------------------
    def _follow_mask(self, lead: torch.Tensor) -> torch.Tensor:
        """The cards that follow ``lead`` (a joker belongs to the trump suit)."""
        lead_trump = ((self._one << lead) & self.trump_mask) != 0
        return torch.where(
            lead_trump, self.trump_mask, self._suit_masks[self._suit_of[lead]]
        )

    def _legal_bits(self) -> torch.Tensor:
        if self._legal is None:
            self._legal = self._compute_legal_bits()
        return self._legal

    def _compute_legal_bits(self) -> torch.Tensor:
        hand = _pick(self._hands, self.to_play == 0)
        # "Follow suit if you can. If you can't, play any card." (Jokers follow as
        # trumps.) Honeymoon: "In stage 1 you may play any card."
        follow = hand & self._follow_mask(self.lead.clamp(min=0))
        must = (self.lead >= 0) & (follow != 0)
        if self.honeymoon:
            must &= self.stock_pos >= self.stock_size
        return torch.where(must, follow, hand)

    def legal_mask(self) -> torch.Tensor:
        """``(B, n)`` bool: the legal cards of the player to act in each game."""
        return self._unpack(self._legal_bits()[:, None], self.num_actions)

    def step(self, actions: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """Each game's player to act plays card ``actions[i]``.

        Returns ``(rewards, terminated)``: float32 ``(B, 2)`` (+1 / -1 to the seats of
        a game decided by this play, else 0) and bool ``(B,)``. Terminated games are
        dealt again before this returns (their next observation is the new deal's).
        """
        a = self._actions(actions)
        legal = self._legal_bits()
        n = self.num_actions
        inside = (a >= 0) & (a < n)
        bit = self._one << a.clamp(0, n - 1)
        bad = ~inside | ((bit & legal) == 0)
        if bad.any():
            self._raise_illegal(a, bad)

        p, lead, leader = self.to_play, self.lead, self.leader
        # The card leaves the mover's hand and Seen row. Masking both seats' rows is
        # the same and cheaper than selecting one: the other hand never held it (and
        # a Seen row is part of its hand).
        keep = ~bit
        self._hands = self._hands & keep
        self._seen = self._seen & keep
        self.played = self.played | bit
        leading = lead < 0
        follow = ~leading

        # The trick, resolved for every game and kept where this card followed.
        lead_c = lead.clamp(min=0)
        lead_suit = self._suit_of[lead_c]
        trumps = self.trump_mask
        lead_trump = ((self._one << lead_c) & trumps) != 0
        follow_trump = (bit & trumps) != 0
        same = lead_suit == self._suit_of[a]
        stronger = self._strength[lead_c] > self._strength[a]
        # "The higher card of the suit led wins, unless a trump is played, and then the
        # trump wins." An off-suit card that is not a trump cannot win.
        leader_wins = torch.where(
            follow_trump, lead_trump & stronger, lead_trump | ~same | stronger
        )
        winner = torch.where(leader_wins, leader, p)
        stage1 = self.stock_pos < self.stock_size
        # Failing to follow shows the follower holds no other card of the suit led
        # (Honeymoon: only in stage 2, where following is compulsory).
        # (A card follows a trump lead if it is a trump, any other lead if it is of
        # its suit: `_follow_mask`, from what the trick above already computed.)
        failed = follow & ~torch.where(lead_trump, follow_trump, same)
        if self.honeymoon:
            failed &= ~stage1
        void_suit = torch.where(lead_trump, self.trump, lead_suit)
        mover = self._seats[:, None] == p  # (2, B)
        self._voids = self._voids | torch.where(
            mover & failed, self._one << void_suit, 0
        )
        draw = follow & stage1
        # "the winner of each trick must take the face-up card from the stock. The
        # loser takes the next card face down"
        pos = 2 * HAND_SIZE + self.stock_pos.clamp(max=self.stock_size - 2)
        # rows: the face-up card (pos) and the one below it (pos + 1), one take()
        drawn = self.cards.take(self._row_start + pos + self._seats[:, None])
        prize, hidden = torch.where(draw, self._one << drawn, 0)
        won = self._seats[:, None] == winner  # (2, B): the trick's winner
        self._hands = self._hands | torch.where(won, prize, hidden)
        self._seen = self._seen | torch.where(won, prize, 0)
        self._voids = torch.where(~won & draw, 0, self._voids)
        self.stock_pos = self.stock_pos + 2 * draw
        self._tricks1 = self._tricks1 + (won & draw)
        self._tricks2 = self._tricks2 + (won & (follow & ~stage1))
        # "The winner of each trick leads the next."
        self.to_play = torch.where(leading, 1 - p, winner)
        self.leader = torch.where(leading, leader, winner)
        self.lead = torch.where(leading, a, -1)
        self._legal = None
        if self.honeymoon:
            return self._end_honeymoon()

        # "the game is decided as soon as a player has 7 of them"
        won = self._tricks2 >= TRICKS_TO_WIN
        done = won.any(dim=0)
        rewards = torch.where(done, torch.where(won, 1.0, -1.0), 0.0).to(torch.float32)
        rewards = rewards.T.contiguous()
        if done.any():
            idx = done.nonzero().squeeze(1)
            dealer, cards = self._draw_deals(idx.numel())
            self._start(idx, dealer, cards)
        return rewards, done

    def _end_honeymoon(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Score finished Honeymoon deals, end the episodes that are over, deal the
        next deal (dealer alternating) or a new episode."""
        deal_over = self.played == self._all
        # "The player who takes 14 or more of the 27 tricks scores 1 match point for
        # each trick over 13." 27 is odd, so exactly one player scores.
        totals = self._tricks1 + self._tricks2
        scorer1 = totals[1] > totals[0]
        points = torch.where(scorer1, totals[1], totals[0]) - HAND_SIZE
        scorer = self._seats[:, None] == scorer1.long()  # (2, B)
        self._match = self._match + torch.where(scorer & deal_over, points, 0)
        if self.episode == "deal":
            done = deal_over
            value = points.to(torch.float32)
        else:
            # "the first player to 14 match points wins"
            done = deal_over & (self._match >= self.match_target).any(dim=0)
            value = torch.ones_like(points, dtype=torch.float32)
        sign = torch.where(scorer, 1.0, -1.0)
        rewards = torch.where(done, sign * value, 0.0).to(torch.float32)
        rewards = rewards.T.contiguous()
        if deal_over.any():
            idx = deal_over.nonzero().squeeze(1)
            dealer, cards = self._draw_deals(idx.numel())
            # "Play several deals. The deal alternates"
            new_episode = done[idx]
            dealer = torch.where(new_episode, dealer, 1 - self.dealer[idx])
            self._match[:, idx] = torch.where(new_episode, 0, self._match[:, idx])
            self._start(idx, dealer, cards)
        return rewards, done

    # --- observation ------------------------------------------------------------------
    def _masters(self, hand: torch.Tensor) -> torch.Tensor:
        """Cards of ``hand`` that no unplayed card outside it beats (see
        `parlour.envs.german_whist.observation.masters`)."""
        unplayed = self._suit_masks4[:, None] & ~self.played  # (4, B)
        others = unplayed & ~hand
        # the cards below the highest other card (all of them where there is none:
        # 0 & -0 is 0, minus 1 is every bit)
        below = (others & -others) - 1
        out = hand & unplayed & below
        if not self.honeymoon:
            return out.sum(0)  # suits disjoint: the sum is the union
        # The jokers head the trump suit (JKH, then JKL: the lower id is the higher):
        # the trump run passes through them only if we hold every unplayed joker.
        jokers = self._jokers & ~self.played
        jokers_out = jokers & ~hand
        broken = jokers_out != 0
        mine = hand & jokers & ((jokers_out & -jokers_out) - 1)  # as `below` above
        trump_row = self._suit_ids[:, None] == self.trump
        out = torch.where(trump_row & broken, 0, out)
        return out.sum(0) + mine

    def observe(self, seat: int | torch.Tensor | None = None) -> torch.Tensor:
        """float32 ``(B, 8n + 18)``: the scalar env's observation of ``seat`` (an int
        or a ``(B,)`` tensor; default the player to act) in every game."""
        p = self._seat(seat)
        n, stock_size = self.num_actions, self.stock_size
        mine0 = p == 0
        opp0 = ~mine0
        hand = _pick(self._hands, mine0)
        played = self.played
        stage1 = self.stock_pos < stock_size
        # Stage 2: every card is accounted for, so both hands are known.
        opp_known = torch.where(
            stage1, _pick(self._seen, opp0), self._all & ~hand & ~played
        )
        mine_known = torch.where(stage1, _pick(self._seen, mine0), hand)
        pos = 2 * HAND_SIZE + self.stock_pos.clamp(max=stock_size - 1)
        face = torch.where(
            stage1, self._one << self.cards.take(self._row_start + pos), 0
        )
        if seat is None:  # the player to act: skip comparing to_play with itself
            mine_to_follow, mine_to_lead = self.lead >= 0, self.lead < 0
        else:
            acting = self.to_play == p
            mine_to_follow = (self.lead >= 0) & acting
            mine_to_lead = (self.lead < 0) & acting
        lead_c = self.lead.clamp(min=0)
        lead_bit = self._one << lead_c
        lead_suit = self._suit_of[lead_c]
        # Cards that beat the lead: higher ones of its suit (for a joker: JKH over
        # JKL), and trumps if it is not one; a trump that is not a joker also loses to
        # the jokers.
        higher = self._suit_masks[lead_suit] & (lead_bit - 1)
        lead_trump = (lead_bit & self.trump_mask) != 0
        if self.honeymoon:
            higher_trumps = higher | torch.where(lead_suit == 4, 0, self._jokers)
        else:
            higher_trumps = higher
        beats = torch.where(lead_trump, higher_trumps, higher | self.trump_mask)
        winners = torch.where(mine_to_follow, hand & beats, 0)
        flags = (
            (self._one << self.trump)
            | _pick(self._voids, opp0) << 4
            | (~stage1).long() << 8
            | mine_to_lead.long() << 9
            | (self.dealer == p).long() << 10
        )
        blocks = torch.stack(
            [
                hand,
                opp_known,
                mine_known,
                face,
                played,
                torch.where(mine_to_follow, lead_bit, 0),
                self._masters(hand),
                winners,
                flags,
            ]
        )  # (9, B): block-major, so the stack is contiguous copies
        B = self.batch_size
        n_bits = 8 * n + N_FLAGS
        out = torch.empty(B, self.observation_size, device=self.device)
        self._write_bits(out, 0, blocks[:8], n, block_major=True)
        self._write_bits(out, 8 * n, blocks[8:], N_FLAGS, block_major=True)
        # The counters, divided as rows of one (k, B) tensor and written at once:
        # stock left / stock size, stage-1 tricks (mine, opponent's) / stage-1 tricks,
        # stage-2 tricks / 13 (and Honeymoon's match points / target, capped at 1).
        t1, t2 = self._tricks1, self._tricks2
        counters = [
            stock_size - self.stock_pos,
            _pick(t1, mine0),
            _pick(t1, opp0),
            _pick(t2, mine0),
            _pick(t2, opp0),
        ]
        if self.honeymoon:
            counters += [_pick(self._match, mine0), _pick(self._match, opp0)]
        k = len(counters)
        scaled = torch.stack(counters) / self._divisors[:k]
        if self.honeymoon:
            scaled[5:] = scaled[5:].clamp(max=1.0)
        out[:, n_bits : n_bits + k] = scaled.T
        out[:, n_bits + k :] = 0.0
        return out
