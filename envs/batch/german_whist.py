"""German Whist for B games at once, as torch tensors (batch first).

The rules are those of the scalar engine `parlour.envs.german_whist.rules` (seed
``004_d8444d2889c5bb38.txt``, ``docs/games/german_whist.md``); this module only
re-expresses them as array operations, and ``tests/test_batch.py`` checks that both
play the same game move by move. Every card play costs the same fixed list of tensor
operations whatever the games' positions (tricks are resolved for every game and kept
with ``torch.where`` where a card followed), so the cost per play falls with B.

State: card sets are int64 bitmasks (bit ``c`` = card ``c`` in pack order, suits S H D
C, A high to 2 low inside a suit, so a lower id in a suit is a higher card), per game
or per game and seat. Observations are float32 ``(B, 434)`` in exactly the scalar
env's layout (`parlour.envs.german_whist.observation`), legal masks bool ``(B, 52)``,
rewards float32 ``(B, 2)`` (seat 0, seat 1), terminal flags bool ``(B,)``. A finished
game is dealt again at once from the engine's seeded generator (automatic reset).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from ..core.cards import FRENCH_52
from ..core.engine import IllegalActionError
from ..german_whist.observation import size as observation_size
from ..german_whist.rules import VARIANTS, GermanWhist

N_CARDS = 52
HAND_SIZE = 13
STOCK_SIZE = 26
TRICKS_TO_WIN = 7  # "the game is decided as soon as a player has 7 of them"
OBS_SIZE = observation_size(N_CARDS)  # 8 * 52 + 18 = 434
# The bit blocks of the observation: 8 card blocks of 52, then 11 flag bits (trump
# suit, opponent's voids, stage 2, to lead, dealer); 7 scalars follow.
_N_BITS = 8 * N_CARDS + 11
_ALL = (1 << N_CARDS) - 1
_SUIT_MASKS = [((1 << HAND_SIZE) - 1) << (HAND_SIZE * s) for s in range(4)]


def _check_batch_size(batch_size: Any) -> int:
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size}")
    return int(batch_size)


def _pick(pair: torch.Tensor, first: torch.Tensor) -> torch.Tensor:
    """Column 0 of a ``(B, 2)`` tensor where ``first``, else column 1."""
    return torch.where(first, pair[:, 0], pair[:, 1])


class GermanWhistBatch:
    """``batch_size`` games of German Whist stepped together.

    Args:
        batch_size: B, the number of games.
        variant: ``"german"`` only so far (Honeymoon Whist is not batched yet).
        device: a torch device (``"cpu"``, ``"cuda"``); the same code runs on both.
        seed: seeds the generator that deals every game (dealer and shuffle); None
            draws one from the OS.

    Attributes (tensors of the current position, read-only for callers):
        to_play: ``(B,)`` int64, the seat to act in each game (0 or 1).
        dealer: ``(B,)`` int64. ``cards``: ``(B, 52)`` int64, the deal in the scalar
        engine's chance order (hand 0, hand 1, stock from the top).

    Illegal actions raise `IllegalActionError` (a ValueError) naming the first game
    index with an illegal action and its legal cards, before any game is changed.
    """

    num_players = 2
    num_actions = N_CARDS
    observation_size = OBS_SIZE

    def __init__(
        self,
        batch_size: int,
        variant: str = "german",
        device: str | torch.device = "cpu",
        seed: int | None = None,
    ):
        self.batch_size = _check_batch_size(batch_size)
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
        if variant != "german":
            raise ValueError(
                f"GermanWhistBatch supports variant='german' only; {variant!r} "
                "(Honeymoon Whist) is not batched yet: use "
                "envs.make('german_whist_v0', variant='honeymoon')"
            )
        self.variant = variant
        self.device = torch.device(device)
        self._cpu = self.device.type == "cpu"
        self._rules = GermanWhist(variant=variant)  # parses forced deals
        B, dev, i64 = self.batch_size, self.device, torch.int64
        self.generator = torch.Generator(device=dev)
        self._seats = torch.arange(2, device=dev)
        self._shifts = torch.arange(N_CARDS, device=dev, dtype=i64)
        self._suit_masks = torch.tensor(_SUIT_MASKS, device=dev, dtype=i64)
        self._one = torch.ones((), device=dev, dtype=i64)
        self._arange_b = torch.arange(B, device=dev)
        self.cards = torch.zeros(B, N_CARDS, device=dev, dtype=i64)
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
            f"variant={self.variant!r}, device={str(self.device)!r})"
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
        [26 names, top first]}``, ``dealer`` optional: then drawn) or an int array
        ``(B, 53)`` of the scalar engine's chance outcomes per game (dealer, then the 52
        cards in deal order), as `GermanWhist.forced_chance` gives them.
        """
        if seed is not None:
            self.generator.manual_seed(int(seed))
        elif not hasattr(self, "_seeded"):
            self.generator.seed()
        self._seeded = True
        dealer, cards = self._draw_deals(self.batch_size)
        if deals is not None:
            forced_dealer, cards = self._parse_deals(deals)
            dealer = torch.where(forced_dealer >= 0, forced_dealer, dealer)
        self._start(self._arange_b, dealer, cards)

    def _draw_deals(self, k: int) -> tuple[torch.Tensor, torch.Tensor]:
        g, dev = self.generator, self.device
        dealer = torch.randint(0, 2, (k,), generator=g, device=dev)
        cards = torch.rand(k, N_CARDS, generator=g, device=dev).argsort(dim=1)
        return dealer, cards

    def _parse_deals(self, deals: Any) -> tuple[torch.Tensor, torch.Tensor]:
        B = self.batch_size
        if isinstance(deals, (np.ndarray, torch.Tensor)):
            rows = torch.as_tensor(
                np.asarray(deals) if isinstance(deals, np.ndarray) else deals
            ).to(self.device, torch.int64)
            if rows.shape != (B, N_CARDS + 1):
                raise ValueError(
                    f"deals as an array must have shape ({B}, {N_CARDS + 1}) "
                    f"(dealer, then 52 cards), got {tuple(rows.shape)}"
                )
            bad = ~((rows[:, 0] == 0) | (rows[:, 0] == 1))
            if bad.any():
                i = int(bad.nonzero()[0])
                raise ValueError(
                    f"deals[{i}]: dealer must be 0 or 1, got {int(rows[i, 0])}"
                )
            full = torch.arange(N_CARDS, device=self.device)
            bad = (rows[:, 1:].sort(dim=1).values != full).any(dim=1)
            if bad.any():
                i = int(bad.nonzero()[0])
                raise ValueError(
                    f"deals[{i}]: the 52 cards must be each card id 0..51 once"
                )
            return rows[:, 0], rows[:, 1:]
        if isinstance(deals, Mapping) or not isinstance(deals, Sequence):
            raise ValueError(
                f"deals must be a list of {B} deal dicts or a ({B}, 53) array, "
                f"got {type(deals).__name__}"
            )
        if len(deals) != B:
            raise ValueError(f"deals must give {B} deals, got {len(deals)}")
        out = []
        for i, deal in enumerate(deals):
            if not isinstance(deal, Mapping):
                raise ValueError(f"deals[{i}] must be a dict, got {deal!r}")
            try:
                outcomes = self._rules.forced_chance({"deal": deal})
            except ValueError as err:
                raise ValueError(f"deals[{i}]: {err}") from None
            out.append([-1 if outcomes[0] is None else outcomes[0], *outcomes[1:]])
        rows = torch.tensor(out, device=self.device, dtype=torch.int64)
        return rows[:, 0], rows[:, 1:]

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
        trump = cards[:, 2 * HAND_SIZE] // HAND_SIZE
        self.trump[idx] = trump
        self.trump_mask[idx] = self._suit_masks[trump]
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
        name = FRENCH_52.format
        return {
            "dealer": int(self.dealer[game]),
            "hands": [
                [name(c) for c in cards[:HAND_SIZE]],
                [name(c) for c in cards[HAND_SIZE : 2 * HAND_SIZE]],
            ],
            "stock": [name(c) for c in cards[2 * HAND_SIZE :]],
        }

    # --- play -------------------------------------------------------------------------
    def _legal_bits(self) -> torch.Tensor:
        hand = _pick(self.hands, self.to_play == 0)
        lead_suit = self.lead.clamp(min=0) // HAND_SIZE
        # "Follow suit if you can. If you can't, play any card."
        follow = hand & self._suit_masks[lead_suit]
        return torch.where((self.lead >= 0) & (follow != 0), follow, hand)

    def _unpack(self, bits: torch.Tensor) -> torch.Tensor:
        """``(B,)`` int64 bitmasks to ``(B, 52)`` bool."""
        if self._cpu:
            # numpy's unpackbits on the same memory: about 3x torch's shift-and-mask
            # on CPU (docs/batch.md has the figures).
            raw = bits.numpy().view(np.uint8).reshape(-1, 8)
            unpacked = np.unpackbits(raw, axis=1, count=N_CARDS, bitorder="little")
            return torch.from_numpy(unpacked.view(np.bool_))
        return ((bits[..., None] >> self._shifts) & 1).bool()

    def legal_mask(self) -> torch.Tensor:
        """``(B, 52)`` bool: the legal cards of the player to act in each game."""
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
        inside = (a >= 0) & (a < N_CARDS)
        bit = self._one << a.clamp(0, N_CARDS - 1)
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
        lead_suit = lead_c // HAND_SIZE
        same = lead_suit == a // HAND_SIZE
        # "The higher card of the suit led wins, unless a trump is played, and then the
        # trump wins." Same suit: the lower id is the higher card.
        follow_trump = (a // HAND_SIZE) == self.trump
        leader_wins = (same & (lead_c < a)) | (~same & ~follow_trump)
        winner = torch.where(leader_wins, leader, p)
        # Failing to follow shows the follower holds no other card of the suit led.
        failed = follow & ~same
        self.voids = torch.where(
            sel & failed[:, None],
            self.voids | (self._one << lead_suit)[:, None],
            self.voids,
        )
        stage1 = self.stock_pos < STOCK_SIZE
        draw = follow & stage1
        # "the winner of each trick must take the face-up card from the stock. The
        # loser takes the next card face down"
        pos = 2 * HAND_SIZE + self.stock_pos.clamp(max=STOCK_SIZE - 2)
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

        # "the game is decided as soon as a player has 7 of them"
        done = (self.tricks2 >= TRICKS_TO_WIN).any(dim=1)
        won = self.tricks2 >= TRICKS_TO_WIN
        rewards = torch.where(
            done[:, None],
            torch.where(won, 1.0, -1.0),
            0.0,
        ).to(torch.float32)
        if done.any():
            idx = done.nonzero().squeeze(1)
            dealer, cards = self._draw_deals(idx.numel())
            self._start(idx, dealer, cards)
        return rewards, done

    def _raise_illegal(
        self, a: torch.Tensor, legal: torch.Tensor, bad: torch.Tensor
    ) -> None:
        i = int(bad.nonzero()[0])
        others = int(bad.sum()) - 1
        action = int(a[i])
        what = (
            FRENCH_52.format(action) if 0 <= action < N_CARDS else "out of range 0..51"
        )
        legal_i = int(legal[i])
        names = [FRENCH_52.format(c) for c in range(N_CARDS) if legal_i >> c & 1]
        raise IllegalActionError(
            f"game {i}: action {action} ({what}) is not legal for player_"
            f"{int(self.to_play[i])}; legal: {' '.join(names)}"
            + (f" (and {others} other game(s) with illegal actions)" if others else "")
        )

    # --- observation ------------------------------------------------------------------
    def _masters(self, hand: torch.Tensor) -> torch.Tensor:
        """Cards of ``hand`` that no unplayed card outside it beats (see
        `parlour.envs.german_whist.observation.masters`)."""
        unplayed = self._suit_masks & ~self.played[:, None]  # (B, 4)
        others = unplayed & ~hand[:, None]
        below = torch.where(others != 0, (others & -others) - 1, -1)
        return (hand[:, None] & unplayed & below).sum(1)  # suits disjoint: sum = union

    def observe(self, seat: int | torch.Tensor | None = None) -> torch.Tensor:
        """float32 ``(B, 434)``: the scalar env's observation of ``seat`` (an int or a
        ``(B,)`` tensor; default the player to act) in every game."""
        p = (
            self.to_play
            if seat is None
            else torch.as_tensor(seat, device=self.device, dtype=torch.int64).expand(
                self.batch_size
            )
        )
        mine0 = p == 0  # where() on the two columns is cheaper than gather
        opp0 = ~mine0
        hand = _pick(self.hands, mine0)
        played = self.played
        stage1 = self.stock_pos < STOCK_SIZE
        # Stage 2: every card is accounted for, so both hands are known.
        opp_known = torch.where(stage1, _pick(self.seen, opp0), _ALL & ~hand & ~played)
        mine_known = torch.where(stage1, _pick(self.seen, mine0), hand)
        pos = 2 * HAND_SIZE + self.stock_pos.clamp(max=STOCK_SIZE - 1)
        face = torch.where(
            stage1, self._one << self.cards.gather(1, pos[:, None]).squeeze(1), 0
        )
        mine_to_follow = (self.lead >= 0) & (self.to_play == p)
        lead_c = self.lead.clamp(min=0)
        lead_bit = torch.where(mine_to_follow, self._one << lead_c, 0)
        lead_suit = lead_c // HAND_SIZE
        higher = self._suit_masks[lead_suit] & ((self._one << lead_c) - 1)
        beats = higher | torch.where(lead_suit == self.trump, 0, self.trump_mask)
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
                lead_bit,
                self._masters(hand),
                winners,
                flags,
            ],
            dim=1,
        )
        B = self.batch_size
        out = torch.empty(B, OBS_SIZE, device=self.device)
        if self._cpu:
            # See _unpack. Little-endian bytes of each int64 block, 64 bits per block.
            raw = blocks.numpy().view(np.uint8).reshape(B, 9, 8)
            bits = np.unpackbits(raw, axis=2, bitorder="little")
            o = out.numpy()
            cards = o[:, : 8 * N_CARDS]
            cards.shape = (B, 8, N_CARDS)  # a view or an error, never a silent copy
            cards[...] = bits[:, :8, :N_CARDS]
            o[:, 8 * N_CARDS : _N_BITS] = bits[:, 8, : _N_BITS - 8 * N_CARDS]
        else:
            bits = (blocks[:, :, None] >> self._shifts) & 1
            out[:, :_N_BITS] = bits.view(B, -1)[:, :_N_BITS]
        out[:, _N_BITS] = (STOCK_SIZE - self.stock_pos) / STOCK_SIZE
        t1, t2 = self.tricks1, self.tricks2
        out[:, _N_BITS + 1] = _pick(t1, mine0) / (STOCK_SIZE // 2)
        out[:, _N_BITS + 2] = _pick(t1, opp0) / (STOCK_SIZE // 2)
        out[:, _N_BITS + 3] = _pick(t2, mine0) / 13
        out[:, _N_BITS + 4] = _pick(t2, opp0) / 13
        out[:, _N_BITS + 5 :] = 0.0  # match points: Honeymoon only
        return out

    def state_bytes(self) -> int:
        """Bytes of game state per game (the tensors `step` reads and writes)."""
        tensors = (
            self.cards,
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
