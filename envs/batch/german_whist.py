"""German Whist and Honeymoon Whist for B games at once, as torch tensors (batch
first).

The rules are those of the scalar engine `parlour.envs.german_whist.rules` (seed
``004_d8444d2889c5bb38.txt``, ``docs/games/german_whist.md``); this module only
re-expresses them as array operations, and ``tests/test_batch.py`` checks that both
play the same game move by move. Every card play costs the same fixed list of tensor
operations whatever the games' positions (tricks are resolved for every game and kept
with ``torch.where`` where a card followed), so the cost per play falls with B.

State: card sets are int64 bitmasks (bit ``c`` = card ``c`` in pack order, suits S H D
C, A high to 2 low inside a suit, so a lower id in a suit is a higher card; then JKH,
JKL in Honeymoon), per game or per game and seat. With ``n`` cards (52, or 54),
observations are float32 ``(B, 8n + 18)`` in exactly the scalar env's layout
(`parlour.envs.german_whist.observation`), legal masks bool ``(B, n)``, rewards float32
``(B, 2)`` (seat 0, seat 1; the scalar env's rewards), terminal flags bool ``(B,)``. A
finished episode is dealt again at once from the engine's seeded generator (automatic
reset); so is the next deal of a Honeymoon match, inside the episode.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from ..core.engine import IllegalActionError
from ..german_whist.observation import size as observation_size
from ..german_whist.rules import EPISODES, MATCH_TARGET, VARIANTS, GermanWhist
from ._common import check_batch_size, deal_dict_rows

HAND_SIZE = 13
TRICKS_TO_WIN = 7  # "the game is decided as soon as a player has 7 of them"
STAGE2_TRICKS = 13
N_FLAGS = 11  # trump suit, opponent's voids, stage 2, to lead, dealer


def _pick(pair: torch.Tensor, first: torch.Tensor) -> torch.Tensor:
    """Column 0 of a ``(B, 2)`` tensor where ``first``, else column 1."""
    return torch.where(first, pair[:, 0], pair[:, 1])


class GermanWhistBatch:
    """``batch_size`` games of German Whist stepped together.

    Args:
        batch_size: B, the number of games.
        variant: ``"german"`` (52 cards, one deal) or ``"honeymoon"`` (Honeymoon
            Whist: 54 cards, every trick counts).
        episode: Honeymoon only: ``"match"`` (default, deals with alternating dealer
            until a player has ``match_target`` match points; +1 / -1) or ``"deal"``
            (one deal; +/- the deal's match points), as the scalar env.
        match_target: match points that win a Honeymoon match (seed: 14).
        device: a torch device (``"cpu"``, ``"cuda"``); the same code runs on both.
        seed: seeds the generator that deals every game (dealer and shuffle); None
            draws one from the OS.

    Attributes (tensors of the current position, read-only for callers):
        to_play: ``(B,)`` int64, the seat to act in each game (0 or 1).
        dealer: ``(B,)`` int64. ``cards``: ``(B, n)`` int64, the deal in the scalar
        engine's chance order (hand 0, hand 1, stock from the top). ``match``:
        ``(B, 2)`` match points (Honeymoon).

    Illegal actions raise `IllegalActionError` (a ValueError) naming the first game
    index with an illegal action and its legal cards, before any game is changed.
    """

    num_players = 2

    def __init__(
        self,
        batch_size: int,
        variant: str = "german",
        device: str | torch.device = "cpu",
        seed: int | None = None,
        episode: str | None = None,
        match_target: int = MATCH_TARGET,
    ):
        self.batch_size = check_batch_size(batch_size)
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
        if episode is not None and episode not in EPISODES:
            raise ValueError(f"episode must be one of {EPISODES}, got {episode!r}")
        # The scalar rules check the options' combinations with the same messages.
        rules = GermanWhist(variant=variant, episode=episode, match_target=match_target)
        self.variant, self.episode = variant, rules.episode
        self.match_target = match_target
        self.honeymoon = rules.honeymoon
        try:
            self.device = torch.device(device)
        except RuntimeError as err:
            raise ValueError(f"device {device!r}: {err}") from None
        self._cpu = self.device.type == "cpu"
        # parses forced deals: one deal at a time, so no "later deals random" warning
        self._rules = GermanWhist(variant=variant, episode="deal")
        deck = rules.deck
        self.deck = deck
        self.num_actions = n = deck.size
        self.stock_size = rules.stock_size
        self.observation_size = observation_size(n)
        self._all = deck.all_mask
        B, dev, i64 = self.batch_size, self.device, torch.int64
        self.generator = torch.Generator(device=dev)
        self._seats = torch.arange(2, device=dev)
        self._shifts = torch.arange(n, device=dev, dtype=i64)
        # suits 0..3 and 4 = the jokers (Honeymoon); card -> suit, card -> strength
        self._suit_masks = torch.tensor(deck.suit_mask, device=dev, dtype=i64)
        self._suit_of = torch.tensor(deck.suit, device=dev, dtype=i64)
        self._strength = torch.tensor(rules._strength, device=dev, dtype=i64)
        self._jokers = int(rules.jokers)
        self._suit_ids = torch.arange(4, device=dev)
        self._one = torch.ones((), device=dev, dtype=i64)
        self._arange_b = torch.arange(B, device=dev)
        self.cards = torch.zeros(B, n, device=dev, dtype=i64)
        self.match = torch.zeros(B, 2, device=dev, dtype=i64)  # Honeymoon
        self.hands = torch.zeros(B, 2, device=dev, dtype=i64)
        self.seen = torch.zeros(B, 2, device=dev, dtype=i64)  # Seen rows
        self.voids = torch.zeros(B, 2, device=dev, dtype=i64)  # suit bits
        self.tricks1 = torch.zeros(B, 2, device=dev, dtype=i64)
        self.tricks2 = torch.zeros(B, 2, device=dev, dtype=i64)
        self.played = torch.zeros(B, device=dev, dtype=i64)
        self.stock_pos = torch.zeros(B, device=dev, dtype=i64)
        self.trump = torch.zeros(B, device=dev, dtype=i64)
        self.trump_mask = torch.zeros(B, device=dev, dtype=i64)
        self.dealer = torch.zeros(B, device=dev, dtype=i64)
        self.leader = torch.zeros(B, device=dev, dtype=i64)
        self.to_play = torch.zeros(B, device=dev, dtype=i64)
        self.lead = torch.full((B,), -1, device=dev, dtype=i64)  # -1: nothing led
        self.reset(seed=seed)

    def __repr__(self) -> str:
        return (
            f"GermanWhistBatch(batch_size={self.batch_size}, "
            f"variant={self.variant!r}, episode={self.episode!r}, "
            f"device={str(self.device)!r})"
        )

    # --- dealing ----------------------------------------------------------------------
    def reset(
        self,
        seed: int | None = None,
        deals: Sequence[Mapping[str, Any]] | np.ndarray | torch.Tensor | None = None,
    ) -> None:
        """Deal every game afresh.

        ``seed`` reseeds the generator (None keeps it running; at construction None
        seeds it from the OS). ``deals`` forces the deals: either B dicts in the scalar
        env's format (``{"dealer": d, "hands": [[13 names], [13 names]], "stock":
        [26 names (28 in Honeymoon), top first]}``, ``dealer`` optional: then drawn)
        or an int array ``(B, n + 1)`` of the scalar engine's chance outcomes per game
        (dealer, then the ``n`` cards in deal order), as `GermanWhist.forced_chance`
        gives them. In a Honeymoon match these are the first deals; later ones are
        drawn, the dealer alternating.
        """
        # Bad deals are refused before the generator or any game changes.
        forced = None if deals is None else self._parse_deals(deals)
        if seed is not None:
            self.generator.manual_seed(int(seed))
        elif not hasattr(self, "_seeded"):
            self.generator.seed()
        self._seeded = True
        dealer, cards = self._draw_deals(self.batch_size)
        if forced is not None:
            forced_dealer, cards = forced
            dealer = torch.where(forced_dealer >= 0, forced_dealer, dealer)
        self.match.zero_()
        self._start(self._arange_b, dealer, cards)

    def _draw_deals(self, k: int) -> tuple[torch.Tensor, torch.Tensor]:
        g, dev = self.generator, self.device
        dealer = torch.randint(0, 2, (k,), generator=g, device=dev)
        cards = torch.rand(k, self.num_actions, generator=g, device=dev).argsort(dim=1)
        return dealer, cards

    def _parse_deals(self, deals: Any) -> tuple[torch.Tensor, torch.Tensor]:
        B = self.batch_size
        if isinstance(deals, (np.ndarray, torch.Tensor)):
            rows = torch.as_tensor(
                np.asarray(deals) if isinstance(deals, np.ndarray) else deals
            ).to(self.device, torch.int64)
            n = self.num_actions
            if rows.shape != (B, n + 1):
                raise ValueError(
                    f"deals as an array must have shape ({B}, {n + 1}) "
                    f"(dealer, then {n} cards), got {tuple(rows.shape)}"
                )
            bad = ~((rows[:, 0] == 0) | (rows[:, 0] == 1))
            if bad.any():
                i = int(bad.nonzero()[0])
                raise ValueError(
                    f"deals[{i}]: dealer must be 0 or 1, got {int(rows[i, 0])}"
                )
            full = torch.arange(n, device=self.device)
            bad = (rows[:, 1:].sort(dim=1).values != full).any(dim=1)
            if bad.any():
                i = int(bad.nonzero()[0])
                raise ValueError(
                    f"deals[{i}]: the {n} cards must be each card id 0..{n - 1} once"
                )
            return rows[:, 0], rows[:, 1:]
        return deal_dict_rows(
            deals, B, self.num_actions + 1, self._rules.forced_chance, self.device
        )

    def _start(
        self, idx: torch.Tensor, dealer: torch.Tensor, cards: torch.Tensor
    ) -> None:
        """Games ``idx`` start play on the deal (``dealer``, ``cards``)."""
        bits = self._one << cards
        self.hands[idx] = torch.stack(
            [bits[:, :HAND_SIZE].sum(1), bits[:, HAND_SIZE : 2 * HAND_SIZE].sum(1)], 1
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
        for t in (self.seen, self.voids, self.tricks1, self.tricks2):
            t[idx] = 0
        self.played[idx] = 0
        self.stock_pos[idx] = 0

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
        hand = _pick(self.hands, self.to_play == 0)
        # "Follow suit if you can. If you can't, play any card." (Jokers follow as
        # trumps.) Honeymoon: "In stage 1 you may play any card."
        follow = hand & self._follow_mask(self.lead.clamp(min=0))
        must = (self.lead >= 0) & (follow != 0)
        if self.honeymoon:
            must &= self.stock_pos >= self.stock_size
        return torch.where(must, follow, hand)

    def _unpack(self, bits: torch.Tensor) -> torch.Tensor:
        """``(B,)`` int64 bitmasks to ``(B, n)`` bool."""
        if self._cpu:
            # numpy's unpackbits on the same memory: about 3x torch's shift-and-mask
            # on CPU (docs/batch.md has the figures).
            raw = bits.numpy().view(np.uint8).reshape(-1, 8)
            unpacked = np.unpackbits(
                raw, axis=1, count=self.num_actions, bitorder="little"
            )
            return torch.from_numpy(unpacked.view(np.bool_))
        return ((bits[..., None] >> self._shifts) & 1).bool()

    def legal_mask(self) -> torch.Tensor:
        """``(B, n)`` bool: the legal cards of the player to act in each game."""
        return self._unpack(self._legal_bits())

    def step(self, actions: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """Each game's player to act plays card ``actions[i]``.

        Returns ``(rewards, terminated)``: float32 ``(B, 2)`` (+1 / -1 to the seats of
        a game decided by this play, else 0) and bool ``(B,)``. Terminated games are
        dealt again before this returns (their next observation is the new deal's).
        """
        a = torch.as_tensor(actions, device=self.device)
        if a.shape != (self.batch_size,) or a.dtype.is_floating_point or a.is_complex():
            raise ValueError(
                f"actions must be {self.batch_size} integers (shape "
                f"({self.batch_size},)), got {a.dtype} of shape {tuple(a.shape)}"
            )
        a = a.to(torch.int64)
        legal = self._legal_bits()
        n = self.num_actions
        inside = (a >= 0) & (a < n)
        bit = self._one << a.clamp(0, n - 1)
        bad = ~inside | ((bit & legal) == 0)
        if bad.any():
            self._raise_illegal(a, legal, bad)

        p, lead, leader = self.to_play, self.lead, self.leader
        sel = self._seats == p[:, None]  # (B, 2): the mover's column
        keep = ~bit[:, None]
        self.hands = torch.where(sel, self.hands & keep, self.hands)
        self.seen = torch.where(sel, self.seen & keep, self.seen)
        self.played = self.played | bit
        leading = lead < 0
        follow = ~leading

        # The trick, resolved for every game and kept where this card followed.
        lead_c = lead.clamp(min=0)
        trumps = self.trump_mask
        lead_trump = ((self._one << lead_c) & trumps) != 0
        follow_trump = (bit & trumps) != 0
        same = self._suit_of[lead_c] == self._suit_of[a]
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
        failed = follow & ((bit & self._follow_mask(lead_c)) == 0)
        if self.honeymoon:
            failed &= ~stage1
        void_suit = torch.where(lead_trump, self.trump, self._suit_of[lead_c])
        self.voids = torch.where(
            sel & failed[:, None],
            self.voids | (self._one << void_suit)[:, None],
            self.voids,
        )
        draw = follow & stage1
        # "the winner of each trick must take the face-up card from the stock. The
        # loser takes the next card face down"
        pos = 2 * HAND_SIZE + self.stock_pos.clamp(max=self.stock_size - 2)
        prize = self.cards.gather(1, pos[:, None]).squeeze(1)
        hidden = self.cards.gather(1, (pos + 1)[:, None]).squeeze(1)
        zero = torch.zeros_like(bit)
        pbit = torch.where(draw, self._one << prize, zero)
        hbit = torch.where(draw, self._one << hidden, zero)
        wsel = self._seats == winner[:, None]
        self.hands = self.hands | torch.where(wsel, pbit[:, None], hbit[:, None])
        self.seen = self.seen | torch.where(wsel, pbit[:, None], 0)
        self.voids = torch.where(~wsel & draw[:, None], 0, self.voids)
        self.stock_pos = self.stock_pos + 2 * draw
        self.tricks1 = self.tricks1 + (wsel & draw[:, None])
        self.tricks2 = self.tricks2 + (wsel & (follow & ~stage1)[:, None])
        # "The winner of each trick leads the next."
        self.to_play = torch.where(leading, 1 - p, winner)
        self.leader = torch.where(leading, leader, winner)
        self.lead = torch.where(leading, a, -1)
        if self.honeymoon:
            return self._end_honeymoon()

        # "the game is decided as soon as a player has 7 of them"
        won = self.tricks2 >= TRICKS_TO_WIN
        done = won.any(dim=1)
        rewards = torch.where(done[:, None], torch.where(won, 1.0, -1.0), 0.0).to(
            torch.float32
        )
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
        totals = self.tricks1 + self.tricks2
        scorer1 = totals[:, 1] > totals[:, 0]
        points = torch.where(scorer1, totals[:, 1], totals[:, 0]) - HAND_SIZE
        scorer_col = self._seats == scorer1.long()[:, None]
        self.match = self.match + torch.where(
            scorer_col & deal_over[:, None], points[:, None], 0
        )
        if self.episode == "deal":
            done = deal_over
            value = points.to(torch.float32)
        else:
            # "the first player to 14 match points wins"
            done = deal_over & (self.match >= self.match_target).any(dim=1)
            value = torch.ones_like(points, dtype=torch.float32)
        sign = torch.where(scorer_col, 1.0, -1.0)
        rewards = torch.where(done[:, None], sign * value[:, None], 0.0).to(
            torch.float32
        )
        if deal_over.any():
            idx = deal_over.nonzero().squeeze(1)
            dealer, cards = self._draw_deals(idx.numel())
            # "Play several deals. The deal alternates"
            new_episode = done[idx]
            dealer = torch.where(new_episode, dealer, 1 - self.dealer[idx])
            self.match[idx] = torch.where(new_episode[:, None], 0, self.match[idx])
            self._start(idx, dealer, cards)
        return rewards, done

    def _raise_illegal(
        self, a: torch.Tensor, legal: torch.Tensor, bad: torch.Tensor
    ) -> None:
        i = int(bad.nonzero()[0])
        others = int(bad.sum()) - 1
        action = int(a[i])
        n = self.num_actions
        what = (
            self.deck.format(action) if 0 <= action < n else f"out of range 0..{n - 1}"
        )
        legal_i = int(legal[i])
        names = [self.deck.format(c) for c in range(n) if legal_i >> c & 1]
        raise IllegalActionError(
            f"game {i}: action {action} ({what}) is not legal for player_"
            f"{int(self.to_play[i])}; legal: {' '.join(names)}"
            + (f" (and {others} other game(s) with illegal actions)" if others else "")
        )

    # --- observation ------------------------------------------------------------------
    def _masters(self, hand: torch.Tensor) -> torch.Tensor:
        """Cards of ``hand`` that no unplayed card outside it beats (see
        `parlour.envs.german_whist.observation.masters`)."""
        unplayed = self._suit_masks[:4] & ~self.played[:, None]  # (B, 4)
        others = unplayed & ~hand[:, None]
        below = torch.where(others != 0, (others & -others) - 1, -1)
        out = hand[:, None] & unplayed & below
        if not self.honeymoon:
            return out.sum(1)  # suits disjoint: the sum is the union
        # The jokers head the trump suit (JKH, then JKL: the lower id is the higher):
        # the trump run passes through them only if we hold every unplayed joker.
        jokers = self._jokers & ~self.played
        jokers_out = jokers & ~hand
        broken = jokers_out != 0
        mine = hand & jokers & torch.where(broken, (jokers_out & -jokers_out) - 1, -1)
        trump_col = self._suit_ids == self.trump[:, None]
        out = torch.where(trump_col & broken[:, None], 0, out)
        return out.sum(1) + mine

    def observe(self, seat: int | torch.Tensor | None = None) -> torch.Tensor:
        """float32 ``(B, 8n + 18)``: the scalar env's observation of ``seat`` (an int
        or a ``(B,)`` tensor; default the player to act) in every game."""
        p = (
            self.to_play
            if seat is None
            else torch.as_tensor(seat, device=self.device, dtype=torch.int64).expand(
                self.batch_size
            )
        )
        n, stock_size = self.num_actions, self.stock_size
        mine0 = p == 0  # where() on the two columns is cheaper than gather
        opp0 = ~mine0
        hand = _pick(self.hands, mine0)
        played = self.played
        stage1 = self.stock_pos < stock_size
        # Stage 2: every card is accounted for, so both hands are known.
        opp_known = torch.where(
            stage1, _pick(self.seen, opp0), self._all & ~hand & ~played
        )
        mine_known = torch.where(stage1, _pick(self.seen, mine0), hand)
        pos = 2 * HAND_SIZE + self.stock_pos.clamp(max=stock_size - 1)
        face = torch.where(
            stage1, self._one << self.cards.gather(1, pos[:, None]).squeeze(1), 0
        )
        mine_to_follow = (self.lead >= 0) & (self.to_play == p)
        lead_c = self.lead.clamp(min=0)
        lead_bit = self._one << lead_c
        lead_suit = self._suit_of[lead_c]
        # Cards that beat the lead: higher ones of its suit (for a joker: JKH over
        # JKL), and trumps if it is not one; a trump that is not a joker also loses to
        # the jokers.
        higher = self._suit_masks[lead_suit] & (lead_bit - 1)
        lead_trump = (lead_bit & self.trump_mask) != 0
        beats = torch.where(
            lead_trump,
            higher | torch.where(lead_suit == 4, 0, self._jokers),
            higher | self.trump_mask,
        )
        winners = torch.where(mine_to_follow, hand & beats, 0)
        flags = (
            (self._one << self.trump)
            | _pick(self.voids, opp0) << 4
            | (~stage1).long() << 8
            | ((self.to_play == p) & (self.lead < 0)).long() << 9
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
            ],
            dim=1,
        )
        B = self.batch_size
        n_bits = 8 * n + N_FLAGS
        out = torch.empty(B, self.observation_size, device=self.device)
        if self._cpu:
            # See _unpack. Little-endian bytes of each int64 block, 64 bits per block.
            raw = blocks.numpy().view(np.uint8).reshape(B, 9, 8)
            bits = np.unpackbits(raw, axis=2, bitorder="little")
            o = out.numpy()
            cards = o[:, : 8 * n]
            cards.shape = (B, 8, n)  # a view or an error, never a silent copy
            cards[...] = bits[:, :8, :n]
            o[:, 8 * n : n_bits] = bits[:, 8, :N_FLAGS]
        else:
            bits = (blocks[:, :, None] >> self._shifts) & 1
            out[:, :n_bits] = bits.view(B, -1)[:, :n_bits]
        out[:, n_bits] = (stock_size - self.stock_pos) / stock_size
        t1, t2 = self.tricks1, self.tricks2
        stage1_total = stock_size // 2
        out[:, n_bits + 1] = _pick(t1, mine0) / stage1_total
        out[:, n_bits + 2] = _pick(t1, opp0) / stage1_total
        out[:, n_bits + 3] = _pick(t2, mine0) / STAGE2_TRICKS
        out[:, n_bits + 4] = _pick(t2, opp0) / STAGE2_TRICKS
        if self.honeymoon:
            target = self.match_target
            out[:, n_bits + 5] = (_pick(self.match, mine0) / target).clamp(max=1.0)
            out[:, n_bits + 6] = (_pick(self.match, opp0) / target).clamp(max=1.0)
        else:
            out[:, n_bits + 5 :] = 0.0
        return out

    def state_bytes(self) -> int:
        """Bytes of game state per game (the tensors `step` reads and writes)."""
        tensors = (
            self.cards,
            self.match,
            self.hands,
            self.seen,
            self.voids,
            self.tricks1,
            self.tricks2,
            self.played,
            self.stock_pos,
            self.trump,
            self.trump_mask,
            self.dealer,
            self.leader,
            self.to_play,
            self.lead,
        )
        total = sum(t.element_size() * t.nelement() for t in tensors)
        return total // self.batch_size
