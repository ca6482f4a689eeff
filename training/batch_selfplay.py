"""The vectorised self-play environment: B games of a batched engine
(`parlour.envs.batch.ENGINES`), one learner seat per game, the other seats played by
opponents from the shared `OpponentPool`.

This is `training.selfplay.SelfPlayEnv` for B games at once, with one difference that
the batched engines force. An engine's ``step`` plays one card in *every* game, so a
game cannot wait while the others catch up: each call of `BatchSelfPlay.step` is one
card play in all B games, made by the learner in the games where its seat is to act
(``turn.learner``) and by the games' opponents in the others. A trainer therefore gets
the learner's decisions as the ``learner`` rows of each step (about B / players of
them) and stitches each game's decisions together itself (`training.backends.batch`
does it in its advantage estimate). Everything else is as in the scalar env:

- each episode draws the learner's seat at random (or from ``learner_seats``) and one
  opponent from the pool for all the other seats (partners included: the learner
  controls only its own seat);
- the reward of a step is what the learner's seat received at it, whoever played; at the
  end of an episode that includes the terminal reward after another player's last card;
  partners share the team reward because the engines' rewards already do;
- ``on_episode(opponent_kind, final_return)`` is called for every finished episode.

The pool's kinds that can play inside the batch are ``self`` (the frozen snapshots, as
`NumpyPolicy` weights, sampling from their masked policy), ``random`` (a uniform
legal card) and a fixed network (``ckpt:PATH``, ``pretrained``: its weights, playing
its best move, or sampling with ``@sample``, as the scalar agent does; what
``parlour exploit`` trains a best response against). All the games an opponent plays
are evaluated together: one forward pass per snapshot and one draw for all the
opponents' rows per step. The heuristic and search bots are scalar Python: they stay
out of the batched rollout (they evaluate the learner and teach it in the warm start),
and a pool that gives them weight is refused by `check_opponents`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .. import envs
from .policy import ACTIVATIONS, NumpyPolicy, SuitAverage
from .selfplay import OpponentPool

#: the opponent kinds that can play inside the batched rollout (and network specs,
#: `is_network`)
BATCH_KINDS = ("self", "random")
_RANDOM = 0  # opponent slot 0 is random play; slots 1.. are snapshots


def engine_class(env_name: str) -> type:
    """The batched engine class of ``env_name``; a one-line ValueError if it has
    none."""
    from ..envs.batch import ENGINES

    if env_name not in ENGINES:
        known = ", ".join(sorted(ENGINES)) or "none"
        raise ValueError(
            f"{env_name} has no batched engine, so --backend batch cannot train it "
            f"(batched engines: {known})"
        )
    return ENGINES[env_name]


def make_engine(
    env_name: str,
    env_options: Mapping[str, Any] | None,
    batch_size: int,
    seed: int | None = None,
    device: str = "cpu",
) -> Any:
    """A batched engine of ``batch_size`` games with the env's game options (driver
    options such as ``illegal_action`` left out); one-line ValueErrors for an env
    without an engine or options the engine does not take."""
    cls = engine_class(env_name)
    options = envs.game_options(env_name, dict(env_options or {}))
    try:
        return cls(batch_size, **options, device=device, seed=seed)
    except TypeError as err:  # an option the batched engine does not take
        raise ValueError(f"the batched {env_name} engine: {err}") from None


def is_network(spec: str) -> bool:
    """Whether the agent spec plays a network's weights alone (``ckpt:PATH``,
    ``pretrained``; not ``expert`` nor inside ``endgame:``): the batched rollout can
    play it."""
    from ..agents.spec import parse

    if spec in BATCH_KINDS:
        return False
    try:
        parsed = parse(spec)
    except ValueError:
        return False
    return parsed.plays_network_alone


def check_opponents(weights: Mapping[str, float]) -> None:
    """ValueError (one line) for an opponent mix that gives weight to a kind the
    batched rollout cannot play."""
    for kind, weight in weights.items():
        if kind not in BATCH_KINDS and not is_network(kind) and weight > 0:
            raise ValueError(
                f"opponents.{kind}: the batched rollout plays only 'self' (snapshots), "
                f"'random' and networks (ckpt:PATH, pretrained); scalar bots such as "
                f"{kind!r} evaluate and teach "
                f"(eval_opponents, warm_start): set opponents.{kind}=0, or use "
                "--preset batch where the env has one"
            )


@dataclass
class BatchTurn:
    """The position in every game: who acts and what they see."""

    observation: torch.Tensor
    """float32 ``(B, obs)``: the player to act's observation"""
    mask: torch.Tensor
    """bool ``(B, A)``: that player's legal actions"""
    learner: torch.Tensor
    """bool ``(B,)``: the learner's seat is to act (else an opponent is)"""


class _Snapshot:
    """A `NumpyPolicy`'s actor as torch tensors sharing its memory (no copy);
    ``deterministic`` plays its best move instead of sampling; ``suit_average`` (a
    network agent's `SuitAverage`) plays its policy averaged over the suit renamings,
    as the agent does outside the batch."""

    def __init__(
        self,
        policy: NumpyPolicy,
        deterministic: bool = False,
        suit_average: SuitAverage | None = None,
    ) -> None:
        self.policy = policy
        self.deterministic = deterministic
        self.suit_average = suit_average
        self.layers = [
            (torch.from_numpy(w), torch.from_numpy(b)) for w, b in policy.layers
        ]
        self.out = (torch.from_numpy(policy.out[0]), torch.from_numpy(policy.out[1]))
        names = [k for k, f in ACTIVATIONS.items() if f is policy.activation]
        self.relu = names == ["relu"]

    def scores(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """What the masked softmax samples from and the argmax picks from: the
        logits, or the log of the suit-averaged probabilities (legal moves only)."""
        if self.suit_average is None:
            return self.logits(x)
        scores = self.suit_average.log_probabilities(x.numpy(), mask.numpy())
        return torch.from_numpy(scores.astype(np.float32))

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        """The network's logits for a batch of observations."""
        for w, b in self.layers:
            x = torch.addmm(b, x, w)
            x = torch.relu(x) if self.relu else torch.tanh(x)
        return torch.addmm(self.out[1], x, self.out[0])


class BatchSelfPlay:
    """B self-play games of ``env_name`` on its batched engine.

    Args:
        env_name, env_options: the env and its options (as for `SelfPlayEnv`).
        batch_size: B, the games played together.
        pool: the shared opponent pool (only ``self`` and ``random`` may have weight).
        seed: seeds the deals, the seats, the opponents' draws and their cards.
        learner_seats: the seats the learner may take (default: all).
        on_episode: called with ``(opponent_kind, final_return)`` per finished episode.
    """

    def __init__(
        self,
        env_name: str,
        env_options: Mapping[str, Any] | None,
        batch_size: int,
        pool: OpponentPool,
        seed: int | None = None,
        learner_seats: Sequence[int] | None = None,
        on_episode: Callable[[str, float], None] | None = None,
    ) -> None:
        check_opponents(pool.weights)
        self.env_name = env_name
        self.pool = pool
        self.engine = make_engine(env_name, env_options, batch_size, seed=seed)
        e = self.engine
        self.batch_size = e.batch_size
        self.num_players = e.num_players
        self.num_actions = e.num_actions
        self.observation_size = e.observation_size
        seats = list(range(e.num_players)) if learner_seats is None else learner_seats
        if not seats or any(s not in range(e.num_players) for s in seats):
            raise ValueError(
                f"learner_seats must be seats 0..{e.num_players - 1}, got {seats}"
            )
        self._seats = torch.tensor(list(seats), dtype=torch.int64)
        self.on_episode = on_episode
        self.generator = torch.Generator()
        self.rng = np.random.default_rng(seed)
        B = self.batch_size
        self.seat = torch.zeros(B, dtype=torch.int64)
        self.opponent = torch.zeros(B, dtype=torch.int64)  # slot index per game
        self.episode_return = torch.zeros(B, dtype=torch.float32)
        # slot 0 is random play, then the pool's fixed networks, then its snapshots
        self._networks = {
            kind: _Snapshot(
                agent.policy,
                bool(getattr(agent, "deterministic", False)),
                getattr(agent, "suit_average", None),
            )
            for kind, agent in pool._fixed.items()
            if is_network(kind) and pool.weights.get(kind, 0) > 0
        }
        self._slots: list[_Snapshot | None] = [None, *self._networks.values()]
        self._n_pool = 0  # the pool's snapshots, after the networks' slots
        self._turn: BatchTurn | None = None
        self.reset(seed)

    # --- episodes ---------------------------------------------------------------------
    def reset(self, seed: int | None = None) -> BatchTurn:
        """Deal every game afresh with new seats and opponents (``seed`` reseeds the
        deals and the draws)."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.generator.manual_seed(int(self.rng.integers(2**62)))
        self.engine.reset(seed=int(self.rng.integers(2**62)))
        self.refresh()
        self._new_episodes(torch.arange(self.batch_size))
        self.episode_return.zero_()
        return self._observe()

    def refresh(self) -> None:
        """Take up the pool's current snapshots (call after the pool changed); games
        in progress keep their opponent, even one that has left the pool."""
        old = self._slots
        known = {id(s.policy): s for s in old if s is not None}
        new: list[_Snapshot | None] = [None, *self._networks.values()]
        for agent in self.pool.snapshots:
            new.append(known.get(id(agent.policy)) or _Snapshot(agent.policy))
        self._n_pool = len(new) - 1 - len(self._networks)
        # snapshots that left the pool stay while a game in progress plays them
        in_pool = {id(s.policy) for s in new[1:] if s is not None}
        in_use = set(self.opponent.unique().tolist())
        new += [
            s
            for i, s in enumerate(old)
            if s is not None and i in in_use and id(s.policy) not in in_pool
        ]
        index = {id(s.policy): i for i, s in enumerate(new) if s is not None}
        remap = torch.tensor(
            [_RANDOM if s is None else index.get(id(s.policy), _RANDOM) for s in old],
            dtype=torch.int64,
        )
        self.opponent = remap[self.opponent]
        self._slots = new

    def kind(self, slot: int) -> str:
        """The pool kind of an opponent slot: ``random``, a network's spec or
        ``self``."""
        if self._slots[slot] is None:
            return "random"
        if slot <= len(self._networks):
            return list(self._networks)[slot - 1]
        return "self"

    def _draw(self, n: int) -> torch.Tensor:
        """``n`` opponent slots drawn from the pool's weights, as `OpponentPool.draw`
        draws one (``self`` falls back to the other kinds while there is no
        snapshot)."""
        weights = self.pool.weights
        n_snap = self._n_pool
        kinds = [*BATCH_KINDS, *self._networks]
        kinds = [k for k in kinds if weights.get(k, 0) > 0]
        if n_snap == 0:
            kinds = [k for k in kinds if k != "self"] or ["random"]
        w = np.array([weights.get(k, 1.0) for k in kinds], dtype=float)
        pick = self.rng.choice(len(kinds), size=n, p=w / w.sum())
        slots = np.zeros(n, dtype=np.int64)
        for i, kind in enumerate(self._networks):
            if kind in kinds:
                slots[pick == kinds.index(kind)] = 1 + i
        if "self" in kinds:
            is_self = pick == kinds.index("self")
            first = 1 + len(self._networks)
            slots[is_self] = first + self.rng.integers(n_snap, size=int(is_self.sum()))
        return torch.from_numpy(slots)

    def _new_episodes(self, idx: torch.Tensor) -> None:
        k = idx.numel()
        choice = torch.randint(len(self._seats), (k,), generator=self.generator)
        self.seat[idx] = self._seats[choice]
        self.opponent[idx] = self._draw(k)
        self.episode_return[idx] = 0.0

    # --- play -------------------------------------------------------------------------
    def _observe(self) -> BatchTurn:
        e = self.engine
        self._turn = BatchTurn(e.observe(), e.legal_mask(), e.to_play == self.seat)
        return self._turn

    @property
    def turn(self) -> BatchTurn:
        """The current position (as the last `reset` or `step` returned it)."""
        assert self._turn is not None
        return self._turn

    def learner_view(self) -> torch.Tensor:
        """float32 ``(B, obs)``: each game's position as the learner's seat sees it,
        whoever is to act (what a trainer bootstraps its value from)."""
        return self.engine.observe(self.seat)

    def opponent_actions(self) -> torch.Tensor:
        """int64 ``(B,)``: the opponents' cards in the games where they are to act
        (other rows 0). Each snapshot plays its games in one batched forward pass,
        sampling from its masked policy; random play picks a uniform legal card."""
        turn = self.turn
        rows = (~turn.learner).nonzero().squeeze(1)
        actions = torch.zeros(self.batch_size, dtype=torch.int64)
        if rows.numel() == 0:
            return actions
        mask = turn.mask.index_select(0, rows)
        logits = torch.zeros(mask.shape, dtype=torch.float32)
        slot = self.opponent.index_select(0, rows)
        best = []  # rows of the networks that play their best move
        with torch.no_grad():
            for s in slot.unique().tolist():
                if s == _RANDOM:
                    continue
                where = (slot == s).nonzero().squeeze(1)
                obs = turn.observation.index_select(0, rows.index_select(0, where))
                logits[where] = self._slots[s].scores(obs, mask[where])
                if self._slots[s].deterministic:
                    best.append(where)
        chosen = sample_masked(logits, mask, self.generator)
        if best:
            where = torch.cat(best)
            legal = logits[where].masked_fill(~mask[where], -torch.inf)
            chosen[where] = legal.argmax(dim=1)
        actions[rows] = chosen
        return actions

    def step(
        self, learner_actions: torch.Tensor
    ) -> tuple[BatchTurn, torch.Tensor, torch.Tensor]:
        """One card play in every game: ``learner_actions[i]`` where the learner is to
        act (other rows are ignored), the opponent's card elsewhere.

        Returns ``(turn, rewards, dones)``: the new position, float32 ``(B,)`` the
        reward of the learner's seat at this play and bool ``(B,)`` episodes that
        ended with it (those games are dealt again, with a new seat and opponent).
        """
        turn = self.turn
        actions = torch.where(
            turn.learner, torch.as_tensor(learner_actions), self.opponent_actions()
        )
        rewards, done = self.engine.step(actions)
        mine = rewards.gather(1, self.seat[:, None]).squeeze(1)
        self.episode_return += mine
        if done.any():
            idx = done.nonzero().squeeze(1)
            if self.on_episode is not None:
                finals = self.episode_return[idx].tolist()
                slots = self.opponent[idx].tolist()
                for s, final in zip(slots, finals, strict=True):
                    self.on_episode(self.kind(s), final)
            self._new_episodes(idx)
        return self._observe(), mine, done


def sample_masked(
    logits: torch.Tensor, mask: torch.Tensor, generator: torch.Generator
) -> torch.Tensor:
    """One action per row from the softmax of ``logits`` over the legal actions
    (Gumbel-max: the argmax of the logits plus Gumbel noise)."""
    u = torch.rand(logits.shape, generator=generator).clamp_(min=1e-20)
    # logits - log(-log(u)), in place in u's memory (negation and addition are exact,
    # so the same numbers as written out, without three temporary tensors)
    noisy = u.log_().neg_().log_().neg_().add_(logits)
    return noisy.masked_fill_(~mask, -torch.inf).argmax(dim=1)


__all__ = [
    "BATCH_KINDS",
    "BatchSelfPlay",
    "BatchTurn",
    "check_opponents",
    "engine_class",
    "is_network",
    "make_engine",
    "sample_masked",
]
