"""Herzeln for B games at once, as torch tensors (batch first).

The rules are those of the scalar engine `parlour.envs.herzeln.rules` (seed
*Herzeln*, ``docs/games/herzeln.md``); this module only re-expresses
them as array operations, and ``tests/test_batch_herzeln.py`` checks that both play the
same game move by move: the partie of eight contracts (seven trick deals and the Domino
deal, either layout), one-deal episodes of any contract, 3 and 4 players, ``early_end``.

Every action costs the same fixed list of tensor operations whatever the games'
positions: a trick is resolved incrementally for every game (the best card so far is
kept with ``torch.where``), and in a partie, where games are in different contracts,
both the trick code and the Domino code run for every game and each keeps its result
where its contract is being played. Only dealing the games whose deal just ended
depends on how many did.

State: card sets are int64 bitmasks over the pack (bit ``c`` = card ``c``; suits S H D
C, ranks A K Q J 10 9 (8 7)), per game and absolute seat as ``(B, P)``. Actions are the
scalar env's ``3N + 1`` ids; legal moves are kept as three N-bit words (play or open,
lay at the top end, lay at the bottom end) and a pass flag. Observations are float32
``(B, observation_size)`` in exactly the scalar env's layout
(`parlour.envs.herzeln.observation`), rewards float32 ``(B, P)`` (each seat's points
scored by that action, as the scalar env pays them), terminal flags bool ``(B,)``. Each
episode's deals are drawn when it starts (so `episode_deals` can replay it in the
scalar env); a finished episode is dealt again inside `step` (automatic reset).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

from ..herzeln.rules import DOMINO, DOMINO_STEP, HAND_SIZE, TRICKS_PER_DEAL, Herzeln
from .base import CardBatchEngine, ForcedDeals, column

N_CONTRACTS = 8
N_FLAGS = 4


class HerzelnBatch(CardBatchEngine):
    """``batch_size`` games of Herzeln stepped together.

    Args:
        batch_size: B, the number of games.
        players, episode, contract, domino_layout, early_end: the scalar env's options
            (same names, defaults and one-line errors; see `Herzeln`).
        device, seed: see `BatchEngine`.

    Attributes (tensors of the current position, read-only for callers):
        to_play: ``(B,)`` int64, the seat to act. ``dealer``, ``deal_no`` (deals
        finished in the episode), ``contract`` (index into `CONTRACTS`): ``(B,)``.
        ``hands``, ``scores`` (partie totals), ``points`` (this deal): ``(B, P)``.

    Forced deals (`reset`), one entry per game: a deal dict in the scalar env's format
    (``{"dealer": d, "hands": [[8 names] × P]}``, ``dealer`` optional: then drawn), a
    list of such dicts (the first deals of the partie, later dealers following the
    rotation, as ``options["deals"]``), or an int array ``(B, 1 + k·N)`` of the scalar
    engine's chance outcomes (dealer, then each deal's N cards, hand 0 first;
    `Herzeln.forced_chance`), k from 1 to the deals in the episode. Deals not forced
    are drawn.
    """

    rules_class = Herzeln
    state_tensors = (
        "deal_hands dealer deal_no contract scores hands played won tricks points "
        "voids held trick to_play leader lead_suit in_trick best best_seat trick_pts "
        "tricks_done top bottom laid place n_out"
    ).split()
    _deal_entry = "deals (a deal dict or a list of them per game)"

    def _build(self) -> None:
        g = self.rules
        self.episode, self.early_end = g.episode, g.early_end
        P = self.num_players
        self.N = N = g.N
        self.R = R = g.num_ranks
        self.L = L = g.num_lines
        self.C = C = len(g.contracts)
        self._set_pack(range(N))
        self._deals_per_episode = C
        self.PASS = g.PASS
        self.per_suit = g.per_suit
        self._has_domino = DOMINO in g.contracts
        self._has_tricks = any(k != DOMINO for k in g.contracts)
        B, dev, i64 = self.batch_size, self.device, torch.int64

        def t(values: Any) -> torch.Tensor:
            return torch.tensor(values, device=dev, dtype=i64)

        self._contracts = t(g.contracts)
        self._suit_masks = t(g.suit_mask)
        self._suit_of = t(g.suit)
        self._strength = t(g.strength)
        self._card_value = t(g.card_value)  # (8, N)
        self._penalty = t(g.penalty_cards)
        self._trick_value = t(g.trick_value)
        self._last_value = t(g.last_trick_value)
        self._max_points = torch.tensor(g.max_points, device=dev, dtype=torch.float64)
        self._line_of = t(g.line_of)
        self._position = t(g.position)
        self._at = t(g.at)  # (L, R)
        self._line_jacks = t([m & g.jacks for m in g.line_cards])
        self._jh = 1 << g.jack_of_hearts
        self._seats = torch.arange(P, device=dev)
        self._rot = torch.arange(1, P + 1, device=dev)
        self._lines = torch.arange(L, device=dev)
        # bit positions inside the observation's two small words (see observe)
        self._void_shifts = N_CONTRACTS + 2 * P + 4 * torch.arange(P, device=dev)
        self._flags_at = N_CONTRACTS + 6 * P
        self._line_base = R * torch.arange(L, device=dev)
        # what `_layout_fits` and `_legal_words` computed for the current position
        self._cache: dict[str, tuple[torch.Tensor, ...]] = {}

        def zeros(*shape: int) -> torch.Tensor:
            return torch.zeros(B, *shape, device=dev, dtype=i64)

        # the episode's deals: hand bitmask of each seat in each deal
        self.deal_hands = zeros(C, P)
        self.dealer = zeros()
        self.deal_no = zeros()
        self.contract = zeros()
        self.scores = zeros(P)
        self.hands = zeros(P)
        self.played = zeros(P)  # cards each seat played or laid this deal
        self.won = zeros(P)
        self.tricks = zeros(P)
        self.points = zeros(P)
        self.voids = zeros(P)  # suit bits
        self.held = zeros(P)  # cards in hand
        self.trick = zeros(P)  # the card each seat put in the current trick (a bit)
        self.to_play = zeros()
        self.leader = zeros()
        self.lead_suit = zeros() - 1  # -1: nothing led
        self.in_trick = zeros()  # cards in the current trick
        self.best = zeros()  # strength of the card winning the trick so far
        self.best_seat = zeros()
        self.trick_pts = zeros()  # what the current trick's cards are worth
        self.tricks_done = zeros()
        self.top = zeros(L) - 1  # Domino: cycle position of each line's ends, -1
        self.bottom = zeros(L) - 1  # while the line is not opened
        self.laid = zeros()
        self.place = zeros(P) - 1  # Domino: finishing place, -1 while holding cards
        self.n_out = zeros()

    # --- dealing ----------------------------------------------------------------------
    def _restart(self, forced: ForcedDeals | None) -> None:
        dealer, hands = self._draw(self.batch_size)
        if forced is not None:
            dealer = torch.where(forced.dealer >= 0, forced.dealer, dealer)
            use = torch.arange(self.C, device=self.device) < forced.count[:, None]
            hands = torch.where(use[:, :, None], self._hands_of(forced.cards), hands)
        self._cache = {}
        self._new_episode(self._arange_b, dealer, hands)

    def _draw(self, k: int) -> tuple[torch.Tensor, torch.Tensor]:
        """``k`` episodes' first dealers and deals (hand bitmasks ``(k, C, P)``)."""
        dealer, cards = self._draw_deals(k, self.C)
        return dealer, self._hands_of(cards)

    def _hands_of(self, cards: torch.Tensor) -> torch.Tensor:
        """``(..., N)`` card ids in deal order to ``(..., P)`` hand bitmasks."""
        bits = self._one << cards
        # distinct bits: the sum is the union
        return bits.view(*cards.shape[:-1], self.num_players, HAND_SIZE).sum(-1)

    def _deal_options(self, i: int, entry: Any) -> Mapping[str, Any]:
        """A deal dict forces the first deal, a list of them the first deals."""
        if isinstance(entry, Mapping):
            return {"deal": entry}
        if isinstance(entry, Sequence) and not isinstance(entry, str) and entry:
            return {"deals": list(entry)}
        raise ValueError(
            f"deals[{i}] must be a deal dict or a non-empty list of them, got {entry!r}"
        )

    def _new_episode(
        self, idx: torch.Tensor, dealer: torch.Tensor, hands: torch.Tensor
    ) -> None:
        """Games ``idx`` start an episode: first dealer ``dealer``, deals ``hands``."""
        self.deal_hands[idx] = hands
        self.dealer[idx] = dealer
        self.deal_no[idx] = 0
        self.scores[idx] = 0
        self._start_deal(idx)

    def _start_deal(self, idx: torch.Tensor) -> None:
        """Games ``idx`` start deal ``deal_no`` of their episode."""
        deal_no = self.deal_no[idx]
        hands = self.deal_hands[idx, deal_no]
        contract = self._contracts[deal_no]
        self.hands[idx] = hands
        self.contract[idx] = contract
        for t in (self.played, self.won, self.tricks, self.points, self.voids):
            t[idx] = 0
        self.trick[idx] = 0
        self.held[idx] = HAND_SIZE
        for t in (self.in_trick, self.trick_pts, self.tricks_done, self.laid):
            t[idx] = 0
        self.n_out[idx] = 0
        self.lead_suit[idx] = -1
        self.top[idx] = -1
        self.bottom[idx] = -1
        self.place[idx] = -1
        # rules-notes §4.3: "The player on the dealer's left leads trick 1" (and starts
        # the Domino deal)
        first = (self.dealer[idx] + 1) % self.num_players
        if self.per_suit:
            # Unteransetzen: "Usually the player with the Unter of Hearts leads"
            holder = ((hands & self._jh) != 0).to(torch.int8).argmax(1)
            first = torch.where(contract == DOMINO, holder, first)
        self.to_play[idx] = first
        self.leader[idx] = first

    def deal(self, game: int) -> dict[str, Any]:
        """Game ``game``'s current deal in the scalar env's forced-deal format."""
        return self._deal_dict(game, int(self.deal_no[game]), int(self.dealer[game]))

    def episode_deals(self, game: int) -> list[dict[str, Any]]:
        """All deals of game ``game``'s episode, for ``env.reset(options={"deals":
        ...})`` (the first with its dealer; later dealers follow the rotation)."""
        P = self.num_players
        first = (int(self.dealer[game]) - int(self.deal_no[game])) % P
        out = [self._deal_dict(game, j, (first + j) % P) for j in range(self.C)]
        for d in out[1:]:
            del d["dealer"]
        return out

    def _deal_dict(self, game: int, j: int, dealer: int) -> dict[str, Any]:
        name = self.rules.deck.format
        hands = self.deal_hands[game, j].tolist()
        return {
            "dealer": dealer,
            "hands": [[name(c) for c in range(self.N) if h >> c & 1] for h in hands],
        }

    # --- legal moves ------------------------------------------------------------------
    def _layout_fits(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Cards that may open a line, go at a top end, go at a bottom end (before
        looking at hands or at what is laid)."""
        # kept until the position changes: `legal_mask`, `observe` and `step` of one
        # round all need it
        if "fits" not in self._cache:
            self._cache["fits"] = self._compute_layout_fits()
        return self._cache["fits"]

    def _compute_layout_fits(
        self,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        opened = self.top >= 0
        R, at = self.R, self._at
        # "above and below … in rank order. Aces may 'turn the corner'": the cycle
        # position after the top end, and the one before the bottom end.
        up = at.gather(1, ((self.top + 1) % R).T).T  # (B, L)
        down = at.gather(1, ((self.bottom + R - 1) % R).T).T
        top = torch.where(opened, up, 0).sum(1)  # lines disjoint: the sum is the union
        bottom = torch.where(opened, down, 0).sum(1)
        # "one begins with a Jack": an unopened line takes only a Jack
        opening = torch.where(opened, 0, self._line_jacks).sum(1)
        if self.per_suit:
            # its holder opens with the Jack of hearts
            first = self.laid == 0
            opening = torch.where(first, self._jh, opening)
            top = torch.where(first, 0, top)
            bottom = torch.where(first, 0, bottom)
        return opening, top, bottom

    def _legal_words(
        self,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Legal actions as (ids 0..N-1, N..2N-1, 2N..3N-1 as N-bit words, pass)."""
        if "legal" not in self._cache:  # kept until the position changes
            self._cache["legal"] = self._compute_legal_words()
        return self._cache["legal"]

    def _compute_legal_words(
        self,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        hand = column(self.hands, self.to_play)
        zero = torch.zeros_like(hand)
        if self._has_tricks:
            # "There is no trump suit; but players must follow suit (Farbzwang)."
            follow = hand & self._suit_masks[self.lead_suit.clamp(min=0)]
            cards = torch.where((self.lead_suit >= 0) & (follow != 0), follow, hand)
        else:
            cards = zero
        if not self._has_domino:
            return cards, zero, zero, zero.bool()
        opening, top, bottom = self._layout_fits()
        first = self.laid == 0 if self.per_suit else None
        if first is not None:
            opening = torch.where(first, opening, opening & hand)
        else:
            opening = opening & hand
        top, bottom = top & hand, bottom & hand
        dom = self.contract == DOMINO
        # rules-notes §4.3: no legal card, the player passes
        pass_ = dom & ((opening | top | bottom) == 0)
        return (
            torch.where(dom, opening, cards),
            torch.where(dom, top, 0),
            torch.where(dom, bottom, 0),
            pass_,
        )

    def legal_mask(self) -> torch.Tensor:
        """``(B, 3N + 1)`` bool: the legal actions of the player to act in each game."""
        w0, w1, w2, pass_ = self._legal_words()
        words = self._unpack(torch.stack([w0, w1, w2], 1)[:, :, None], self.N)
        words = words.reshape(self.batch_size, -1)
        return torch.cat([words, pass_[:, None].to(words.device)], 1)

    # --- play -------------------------------------------------------------------------
    def step(self, actions: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """Each game's player to act takes action ``actions[i]``.

        Returns ``(rewards, terminated)``: float32 ``(B, P)`` (the points each seat
        scored with this action, as the scalar env pays them) and bool ``(B,)``.
        Terminated games are dealt a new episode before this returns; a game whose
        deal ended goes on to the partie's next deal.
        """
        B, P, N = self.batch_size, self.num_players, self.N
        a = self._actions(actions)
        words = self._legal_words()
        inside = (a >= 0) & (a <= self.PASS)
        kind = (a // N).clamp(0, 3)
        card = a % N
        bit = self._one << card
        w = torch.stack([words[0], words[1], words[2], words[3].long()], 1)
        legal_word = w.gather(1, kind[:, None]).squeeze(1)
        ok = torch.where(kind == 3, legal_word != 0, (bit & legal_word) != 0)
        bad = ~inside | ~ok
        if bad.any():
            self._raise_illegal(a, bad)

        self._cache = {}  # the position changes from here on
        p = self.to_play
        sel = self._seats == p[:, None]  # (B, P): the mover's column
        is_pass = kind == 3
        bit = torch.where(is_pass, 0, bit)
        self.hands = torch.where(sel, self.hands & ~bit[:, None], self.hands)
        self.played = torch.where(sel, self.played | bit[:, None], self.played)
        self.held = self.held - (sel & ~is_pass[:, None]).long()
        rewards = torch.zeros(B, P, device=self.device, dtype=torch.int64)
        ended = torch.zeros(B, device=self.device, dtype=torch.bool)
        next_player = p
        dom = self.contract == DOMINO
        if self._has_tricks:
            ended, next_player = self._play_card(p, sel, card, bit, ~dom, rewards)
        if self._has_domino:
            dom_ended, dom_next = self._lay(p, sel, kind, card, bit, dom, rewards)
            ended = torch.where(dom, dom_ended, ended)
            next_player = torch.where(dom, dom_next, next_player)
        self.to_play = next_player
        self.points = self.points + rewards
        self.scores = self.scores + rewards
        self.deal_no = self.deal_no + ended
        terminated = ended & (self.deal_no == self.C)
        if ended.any():
            idx = ended.nonzero().squeeze(1)
            over = terminated[idx]
            # rules-notes §4.3: "the deal passes clockwise each deal"
            self.dealer[idx] = (self.dealer[idx] + 1) % P
            if bool(over.any()):
                new = idx[over]
                dealer, hands = self._draw(new.numel())
                self._new_episode(new, dealer, hands)
            if not bool(over.all()):
                self._start_deal(idx[~over])
        return rewards.to(torch.float32), terminated

    def _play_card(
        self,
        p: torch.Tensor,
        sel: torch.Tensor,
        card: torch.Tensor,
        bit: torch.Tensor,
        tr: torch.Tensor,
        rewards: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """A card played to the trick in games ``tr``; returns (deal ended, next
        player). Adds the trick's points to ``rewards``."""
        P = self.num_players
        leading = self.in_trick == 0
        suit = self._suit_of[card]
        strength = self._strength[card]
        lead_suit = torch.where(leading, suit, self.lead_suit)
        # A card off the suit led shows the player is void in it (public).
        void = tr & ~leading & (suit != lead_suit)
        self.voids = torch.where(
            sel & void[:, None],
            self.voids | (self._one << lead_suit)[:, None],
            self.voids,
        )
        # "players must follow suit": the highest card of the suit led wins.
        beats = leading | ((suit == lead_suit) & (strength > self.best))
        best = torch.where(beats, strength, self.best)
        best_seat = torch.where(beats, p, self.best_seat)
        trick = torch.where(sel & tr[:, None], self.trick | bit[:, None], self.trick)
        k = self.contract
        pts = self.trick_pts + torch.where(tr, self._card_value[k, card], 0)
        in_trick = self.in_trick + tr
        complete = in_trick == P
        done = self.tricks_done + complete
        win = (self._seats == best_seat[:, None]) & complete[:, None]
        pts = pts + self._trick_value[k]
        pts = pts + torch.where(done == TRICKS_PER_DEAL, self._last_value[k], 0)
        rewards += torch.where(win, pts[:, None], 0)
        taken = trick.sum(1)  # the trick's cards (distinct bits)
        self.won = torch.where(win, self.won | taken[:, None], self.won)
        self.tricks = self.tricks + win
        self.tricks_done = done
        keep = ~complete
        self.trick = torch.where(keep[:, None], trick, 0)
        self.lead_suit = torch.where(keep & tr, lead_suit, -1)
        self.in_trick = torch.where(keep, in_trick, 0)
        self.trick_pts = torch.where(keep, pts - self._trick_value[k], 0)
        self.best, self.best_seat = best, best_seat
        # the trick winner leads the next trick
        self.leader = torch.where(
            complete, best_seat, torch.where(leading, p, self.leader)
        )
        next_player = torch.where(complete, best_seat, (p + 1) % P)
        ended = complete & (done == TRICKS_PER_DEAL)
        if self.early_end:
            # a penalty-card deal ends once its penalty cards are all taken
            penalty = self._penalty[k]
            out = self.won.sum(1)
            ended |= complete & (penalty != 0) & ((penalty & ~out) == 0)
        return ended, next_player

    def _lay(
        self,
        p: torch.Tensor,
        sel: torch.Tensor,
        kind: torch.Tensor,
        card: torch.Tensor,
        bit: torch.Tensor,
        dom: torch.Tensor,
        rewards: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """A Domino action in games ``dom``; returns (deal ended, next player). Adds
        the places' points to ``rewards``."""
        P = self.num_players
        lay = dom & (kind < 3)
        line = (self._lines == self._line_of[card][:, None]) & lay[:, None]
        pos = self._position[card][:, None]
        self.top = torch.where(line & (kind != 2)[:, None], pos, self.top)
        self.bottom = torch.where(line & (kind != 1)[:, None], pos, self.bottom)
        self.laid = self.laid | torch.where(lay, bit, 0)
        # "Whoever is first to meld all his or her cards is not penalised … the
        # second to go out gets 10 minus points, the third 20 and the fourth 30."
        holding = self.held > 0
        out = sel & (lay & (column(self.held, p) == 0))[:, None]
        # rules-notes §4.3: the deal ends when one player still holds cards; he is
        # last.
        last = out.any(1) & (holding.sum(1) == 1)
        out_last = holding & last[:, None]
        n_out = self.n_out
        self.place = torch.where(out, n_out[:, None], self.place)
        pts = torch.where(out, DOMINO_STEP * n_out[:, None], 0)
        n_out = n_out + out.any(1)
        self.place = torch.where(out_last, n_out[:, None], self.place)
        pts = pts + torch.where(out_last, DOMINO_STEP * n_out[:, None], 0)
        self.n_out = n_out + last
        rewards += torch.where(dom[:, None], pts, 0)
        # players who went out are skipped
        order = (p[:, None] + self._rot) % P
        has = holding.gather(1, order)
        nxt = order.gather(1, has.to(torch.int8).argmax(1, keepdim=True)).squeeze(1)
        return last & dom, nxt

    def observe(self, seat: int | torch.Tensor | None = None) -> torch.Tensor:
        """float32 ``(B, observation_size)``: the scalar env's observation of ``seat``
        (an int or a ``(B,)`` tensor; default the player to act) in every game."""
        B, P, N, L, R = self.batch_size, self.num_players, self.N, self.L, self.R
        p = self._seat(seat)
        order = (p[:, None] + self._seats) % P  # absolute seat of relative seat k

        def rel(t: torch.Tensor) -> torch.Tensor:
            return t.gather(1, order)

        dom = self.contract == DOMINO
        if self._has_domino:
            opening, top, bottom = self._layout_fits()
            fits = torch.where(dom, (opening | top | bottom) & ~self.laid, 0)
        else:
            fits = torch.zeros_like(self.laid)
        cards = torch.cat(
            [
                column(self.hands, p)[:, None],
                rel(self.played),
                rel(self.trick),
                rel(self.won),
                fits[:, None],
            ],
            1,
        )
        out = torch.empty(B, self.observation_size, device=self.device)
        self._write_bits(out, 0, cards, N)
        col = cards.shape[1] * N
        # One word for the contract, dealer, trick leader and voids (8 + 6P bits)
        # and the four flags after them; one for the Domino line ends (2LR <= 64).
        one = self._one
        to_act = self.to_play == p
        to_lead = to_act & ~dom & (self.in_trick == 0)
        info = (one << self.contract) | one << (N_CONTRACTS + (self.dealer - p) % P)
        info = info | torch.where(
            self.in_trick > 0, one << (N_CONTRACTS + P + (self.leader - p) % P), 0
        )
        info = info | (rel(self.voids) << self._void_shifts).sum(1)
        info = info | (
            (to_act.long() | to_lead.long() << 1 | int(self.episode == "partie") << 2)
            << self._flags_at
        )
        top = torch.where(self.top >= 0, one << (self._line_base + self.top), 0)
        bottom = torch.where(
            self.bottom >= 0, one << (self._line_base + L * R + self.bottom), 0
        )
        ends = (top | bottom).sum(1)  # distinct bits
        n_info = self._flags_at
        self._write_bits(out, col, info[:, None], n_info)
        self._write_bits(out, col + n_info, ends[:, None], 2 * L * R)
        flags_col = col + n_info + 2 * L * R
        self._write_bits(out, flags_col, (info >> self._flags_at)[:, None], N_FLAGS)
        # (flag 3, the game is over, stays 0: finished games have started again)
        f64 = torch.float64
        # scalars computed in float64 and rounded once, as the scalar encoder does
        max_pts = self._max_points[self.contract][:, None]
        g = self.rules
        places = torch.where(dom[:, None] & (self.place >= 0), self.place + 1, 0)
        scalars = torch.cat(
            [
                rel(self.held).to(f64) / HAND_SIZE,
                rel(self.tricks).to(f64) / TRICKS_PER_DEAL,
                rel(self.points).abs().to(f64) / max_pts,
                rel(places).to(f64) / P,
                (rel(self.scores) - g.score_low).to(f64) / (g.score_high - g.score_low),
                self.deal_no[:, None].to(f64) / self.C,
                self.tricks_done[:, None].to(f64) / TRICKS_PER_DEAL,
            ],
            1,
        )
        out[:, flags_col + N_FLAGS :] = scalars
        return out
