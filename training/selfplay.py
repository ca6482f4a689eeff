"""The self-play environment: one learner seat against a pool of opponents, as a
gymnasium env.

Each episode picks the learner's seat at random; every other seat is played by an
opponent drawn from the pool (frozen snapshots of the learner, the game's heuristic bot,
``random``, mixed by weight). Opponents (and, in partnership games, partners) act inside
``step`` until the learner is to move again or the game ends, so the learner always
receives *its own* reward, including the terminal reward that arrives after another
player's final move; partners share the team reward because the engine's returns already
do. ``action_masks()`` serves MaskablePPO.

This deliberately differs from PettingZoo's SB3 tutorial wrapper, which returns one
seat's observation with another seat's reward and never delivers the loser's -1.

Every Parlour env is registered with gymnasium as ``parlour/SelfPlay-<env name>``
(``gymnasium.make("parlour/SelfPlay-german_whist_v0")``, keywords as for
`SelfPlayEnv`) when this module is imported (``import parlour.training.selfplay``).
With ``env_options={"illegal_action": "penalize"}`` an illegal action ends the episode
with the penalty (what gymnasium's and SB3's ``check_env`` need, as they sample actions
without the mask); with the default ``"raise"`` it raises `IllegalActionError`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from .. import agents as agents_mod
from .. import envs
from ..agents.base import Agent, Turn
from ..envs.core.engine import TERMINAL
from .arena import teams_of
from .policy import NumpyPolicy

#: self-play draws every episode's env seed below this, so deals seeded at or above it
#: (`training.arena.run_arena` with ``held_out=True``) were never trained on
TRAIN_SEED_LIMIT = 2**31


class SnapshotAgent(Agent):
    """A frozen copy of the learner's actor, sampling from its masked policy."""

    def __init__(self, policy: NumpyPolicy, label: str, seed: int | None = None):
        self.policy = policy
        self.spec = label
        self.rng = np.random.default_rng(seed)

    def act(self, turn: Turn) -> int:
        return self.policy.act(
            turn.observation, turn.mask, self.rng, deterministic=False
        )


@dataclass
class OpponentPool:
    """Opponent kinds and their weights; ``"self"`` means the frozen snapshots of the
    learner."""

    env_name: str
    weights: dict[str, float]
    seed: int = 0
    env_options: dict[str, Any] = field(default_factory=dict)
    max_snapshots: int = 10
    learner_partners: bool = False
    """the learner's partners play the newest snapshot (`partner`), not the opponent"""
    snapshots: list[SnapshotAgent] = field(default_factory=list)
    _fixed: dict[str, Agent] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.weights or any(w < 0 for w in self.weights.values()):
            raise ValueError(
                f"opponent weights must be non-negative, got {self.weights}"
            )
        if sum(self.weights.values()) <= 0:
            raise ValueError("at least one opponent weight must be positive")
        self.rng = np.random.default_rng(self.seed)
        for i, kind in enumerate(self.weights):
            if kind != "self":
                self._fixed[kind] = agents_mod.make(
                    kind,
                    self.env_name,
                    seed=self.seed + 101 * (i + 1),
                    env_options=self.env_options,
                )

    @classmethod
    def of_config(cls, config: Any) -> OpponentPool:
        """The pool a training config (`TrainConfig`) asks for."""
        return cls(
            config.env,
            dict(config.opponents),
            seed=config.seed,
            env_options=config.env_options,
            max_snapshots=config.max_snapshots,
            learner_partners=config.learner_partners,
        )

    def add_snapshot(self, policy: NumpyPolicy, label: str) -> None:
        """Add a frozen learner; the oldest one leaves when the pool is full."""
        self.snapshots.append(
            SnapshotAgent(policy, label, seed=int(self.rng.integers(2**31)))
        )
        del self.snapshots[: max(0, len(self.snapshots) - self.max_snapshots)]

    def partner(self) -> Agent | None:
        """Who plays the learner's partners: the newest snapshot of the learner with
        ``learner_partners`` (None while there is none), else None (the opponent)."""
        if self.learner_partners and self.snapshots:
            return self.snapshots[-1]
        return None

    def draw(self) -> tuple[str, Agent]:
        """One opponent: its kind and the agent. ``self`` falls back to the others while
        the pool has no snapshot yet."""
        kinds = [k for k in self.weights if k != "self" or self.snapshots]
        w = np.array([self.weights[k] for k in kinds], dtype=float)
        if w.sum() <= 0:  # only "self" has weight and there is no snapshot yet
            kinds, w = ["random"], np.ones(1)
            self._fixed.setdefault(
                "random", agents_mod.make("random", self.env_name, seed=self.seed)
            )
        kind = kinds[int(self.rng.choice(len(kinds), p=w / w.sum()))]
        if kind == "self":
            return kind, self.snapshots[int(self.rng.integers(len(self.snapshots)))]
        return kind, self._fixed[kind]


class SelfPlayEnv(gym.Env):
    """A single-agent view of a Parlour env for one learner seat per episode."""

    metadata = {"render_modes": []}
    #: the learner's observation: the env's float32 vector (no mask: `action_masks`)
    observation_space: gym.spaces.Box
    action_space: gym.spaces.Discrete

    def __init__(
        self,
        env_name: str,
        env_options: Mapping[str, Any] | None = None,
        pool: OpponentPool | None = None,
        seed: int | None = None,
        learner_seats: Sequence[int] | None = None,
        on_episode: Callable[[str, float], None] | None = None,
        labeler: Callable[[Any, Any], Sequence[int] | None] | None = None,
        label_fraction: float = 0.0,
        reward_scale: float = 1.0,
    ):
        super().__init__()
        if not 0 < reward_scale < float("inf"):
            raise ValueError(f"reward_scale must be positive, got {reward_scale}")
        self.reward_scale = float(reward_scale)
        self.env_name = env_name
        self.env_options = dict(env_options or {})
        self.env = envs.make(env_name, raw=True, **self.env_options)
        self.game = self.env.game
        self.pool = pool or OpponentPool(
            env_name, {"random": 1.0}, env_options=self.env_options
        )
        n = self.game.num_players
        self.learner_seats = (
            list(learner_seats) if learner_seats is not None else list(range(n))
        )
        self.observation_space = gym.spaces.Box(
            0.0, 1.0, shape=(self.game.observation_size,), dtype=np.float32
        )
        self.action_space = gym.spaces.Discrete(self.game.num_actions)
        self.on_episode = on_episode
        self._seed_rng = np.random.default_rng(seed)
        self.outcomes: deque[tuple[str, float]] = deque(maxlen=500)
        self.seat = 0
        self.agent = self.env.possible_agents[0]
        self.players: list[Agent | None] = []
        self.opponent_kind = ""
        # The learner's own decisions labelled by an exact solver (`labeler`: game,
        # state -> optimal actions or None), a ``label_fraction`` of them drawn at
        # random: (observation, mask, optimal actions). The trainer empties the list.
        self.labeler, self.label_fraction = labeler, label_fraction
        self.labelled: list[tuple[np.ndarray, np.ndarray, Sequence[int]]] = []
        self._label_rng = np.random.default_rng(None if seed is None else seed + 1)

    # --- gymnasium API ----------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: Mapping[str, Any] | None = None
    ):
        super().reset(seed=seed)
        if seed is not None:
            self._seed_rng = np.random.default_rng(seed)
        episode_seed = int(self._seed_rng.integers(TRAIN_SEED_LIMIT))
        self.env.reset(seed=episode_seed, options=options)
        self.seat = self.learner_seats[
            int(self._seed_rng.integers(len(self.learner_seats)))
        ]
        self.agent = self.env.possible_agents[self.seat]
        self.opponent_kind, opponent = self.pool.draw()
        opponent.reset(seed=int(self._seed_rng.integers(2**31)))
        # Partners come from the pool too (the drawn opponent, or with the pool's
        # learner_partners the learner's newest snapshot); the learner controls only
        # its own seat.
        partner = self.pool.partner()
        if partner is not None:
            partner.reset(seed=int(self._seed_rng.integers(2**31)))
        team = next(t for t in teams_of(self.game) if self.seat in t) if partner else []
        self.players = [
            None if s == self.seat else partner if s in team else opponent
            for s in range(self.game.num_players)
        ]
        self._play_others()
        if self._done():  # decided before the learner moved: no decision to learn from
            return self.reset()
        return self._observation(), {}

    def step(self, action: int):
        # The adapter zeroes the learner's cumulative reward when it acts, then adds its
        # own and the others' rewards, so after the others move it holds this step's
        # reward. The adapter checks the action (an integer in range, legal or
        # penalised): nothing is truncated here.
        if self._done():
            raise RuntimeError("the episode is over: call reset() before step()")
        self.env.step(action)
        self._play_others()
        reward = self.env._cumulative_rewards[self.agent]
        terminated = self._done()
        info: dict[str, Any] = {}
        if terminated:
            illegal = bool(self.env.infos[self.agent]["illegal_action"])
            final = (
                float(reward)
                if illegal
                else self.game.returns(self.env.game_state)[self.seat]
            )
            info = {
                "opponent": self.opponent_kind,
                "final_return": final,
                "illegal_action": illegal,
            }
            self.outcomes.append((self.opponent_kind, final))
            if self.on_episode is not None:
                self.on_episode(self.opponent_kind, final)
            obs = np.zeros(self.observation_space.shape, dtype=np.float32)
        else:
            obs = self._observation()
        return obs, float(reward) * self.reward_scale, terminated, False, info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as a boolean mask (MaskablePPO's hook)."""
        mask = np.zeros(self.game.num_actions, dtype=bool)
        if not self._done():
            mask[self.game.legal_actions(self.env.game_state)] = True
        return mask

    # --- internals --------------------------------------------------------------------
    def _done(self) -> bool:
        # terminations also cover a penalised illegal action, where the game itself
        # has not ended
        return self.env.terminations[self.agent]

    def _observation(self) -> np.ndarray:
        obs = self.game.observe(self.env.game_state, self.seat)
        if self.labeler is not None and self._label_rng.random() < self.label_fraction:
            best = self.labeler(self.game, self.env.game_state)
            if best is not None:
                self.labelled.append((obs.copy(), self.action_masks(), best))
        return obs

    def _play_others(self) -> None:
        """Let the other seats act until the learner is to move or the game ends."""
        env, game = self.env, self.game
        while not env.terminations[self.agent]:
            player = game.current_player(env.game_state)
            if player == TERMINAL or player == self.seat:
                break
            obs = env.observe(env.possible_agents[player])
            turn = Turn(
                game, env.game_state, player, obs["observation"], obs["action_mask"]
            )
            env.step(self.players[player].act(turn))


def register_envs() -> list[str]:
    """Register ``parlour/SelfPlay-<name>`` with gymnasium for every Parlour env (done
    on import); returns the ids. Keywords given to ``gymnasium.make`` reach
    `SelfPlayEnv`."""
    ids = []
    for name in envs.names():
        env_id = f"parlour/SelfPlay-{name}"
        if env_id not in gym.registry:
            gym.register(
                id=env_id,
                entry_point="parlour.training.selfplay:SelfPlayEnv",
                kwargs={"env_name": name},
                disable_env_checker=False,
            )
        ids.append(env_id)
    return ids


register_envs()
