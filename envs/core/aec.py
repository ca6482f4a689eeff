"""One generic PettingZoo AEC adapter for every Parlour engine.

The adapter only maps seats to agent names, owns the seeded ``np_random``, samples chance nodes
until a player has to decide, turns engine returns into PettingZoo rewards and handles the
terminal/illegal-action policy in one place (as pgx's ``core.Env.step`` does). The rules live in
the engine; nothing here knows which game it is running.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .engine import CHANCE, TERMINAL, Game, IllegalActionError

ILLEGAL_ACTION_POLICIES = ("raise", "penalize")


class ParlourAECEnv(AECEnv):
    """A PettingZoo AEC env driving a `Game` engine.

    Observations are ``{"observation": float32 vector in [0, 1], "action_mask": int8 vector}``;
    the mask is all zeros for an agent that is not to act. With ``illegal_action="raise"`` (the
    default) an illegal action raises `IllegalActionError` naming the legal ones; with
    ``"penalize"`` the offender gets ``illegal_reward`` and the episode terminates, as PettingZoo's
    ``TerminateIllegalWrapper`` does, for training code that prefers it.
    """

    metadata = {"render_modes": ["ansi"], "is_parallelizable": False, "render_fps": 1}

    def __init__(
        self,
        game: Game,
        render_mode: str | None = None,
        illegal_action: str = "raise",
        illegal_reward: float = -1.0,
    ):
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if illegal_action not in ILLEGAL_ACTION_POLICIES:
            raise ValueError(
                f"illegal_action must be one of {list(ILLEGAL_ACTION_POLICIES)}, "
                f"got {illegal_action!r}"
            )
        self.game = game
        self.render_mode = render_mode
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self.metadata = {**self.metadata, "name": game.name}
        self.possible_agents = [f"player_{i}" for i in range(game.num_players)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(
                        0.0, 1.0, shape=(game.observation_size,), dtype=np.float32
                    ),
                    "action_mask": spaces.Box(0, 1, shape=(game.num_actions,), dtype=np.int8),
                }
            )
            for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(game.num_actions) for a in self.possible_agents}
        self._zero_mask = np.zeros(game.num_actions, dtype=np.int8)
        self.state = None
        self.np_random, self.np_random_seed = seeding.np_random(None)

    # --- PettingZoo API -------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> None:
        if seed is not None:
            self.np_random, self.np_random_seed = seeding.np_random(seed)
        options = {} if options is None else options
        if not isinstance(options, Mapping):
            raise ValueError(f"reset options must be a dict, got {type(options).__name__}")
        allowed = {"deal", "deals"} | set(self.game.reset_option_keys)
        unknown = sorted(set(options) - allowed)
        if unknown:
            raise ValueError(
                f"unknown reset option(s) {unknown} for {self.game.name}; "
                f"allowed: {sorted(allowed)}"
            )
        forced = deque(self.game.forced_chance(options))
        self.state = self.game.new_state()
        self._advance_chance(forced)
        if forced:
            raise ValueError(
                f"reset options force {len(forced)} more chance outcomes than the game used"
            )
        self._forced = forced
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._last_returns = list(self.game.returns(self.state))
        self.agent_selection = self.possible_agents[0]
        self._finish_step()

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        seat = self.agent_name_mapping[agent]
        if action is None:
            raise IllegalActionError(
                f"{agent} is to act and must choose an action; None is only for finished agents"
            )
        try:
            action = int(action)
        except (TypeError, ValueError):
            raise IllegalActionError(f"action must be an integer, got {action!r}") from None
        if not 0 <= action < self.game.num_actions:
            raise IllegalActionError(
                f"action {action} is out of range 0..{self.game.num_actions - 1}"
            )
        self._cumulative_rewards[agent] = 0.0
        try:
            self.game.apply(self.state, action)
        except IllegalActionError:
            if self.illegal_action == "raise":
                raise
            self._penalize(seat)
            return
        self._advance_chance(self._forced)
        returns = self.game.returns(self.state)
        for i, a in enumerate(self.possible_agents):
            self.rewards[a] = float(returns[i] - self._last_returns[i])
        self._last_returns = list(returns)
        self._finish_step()
        self._accumulate_rewards()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self.agent_name_mapping[agent]
        return {
            "observation": self.game.observe(self.state, seat),
            "action_mask": self._mask(seat),
        }

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        if self.state is None:
            raise RuntimeError("call reset() before render()")
        return self.game.render(self.state)

    def close(self) -> None:
        pass

    # --- Parlour extras -------------------------------------------------------------------
    def action_name(self, action: int) -> str:
        """The conventional name of an action id (``"QS"`` for a card)."""
        return self.game.action_name(action)

    def action_id(self, name: str) -> int:
        """The action id of a name (card names in any accepted spelling)."""
        return self.game.action_id(name)

    def legal_actions(self, agent: str | None = None) -> list[int]:
        """The legal actions of ``agent`` (default: the agent to act); empty when not its turn."""
        seat = self.agent_name_mapping[agent or self.agent_selection]
        if self.game.current_player(self.state) != seat:
            return []
        return self.game.legal_actions(self.state)

    # --- internals --------------------------------------------------------------------------
    def _mask(self, seat: int) -> np.ndarray:
        if self.game.current_player(self.state) != seat:
            return self._zero_mask.copy()
        mask = np.zeros(self.game.num_actions, dtype=np.int8)
        mask[self.game.legal_actions(self.state)] = 1
        return mask

    def _advance_chance(self, forced: deque) -> None:
        game, state = self.game, self.state
        sampled: list[int] = []
        while game.current_player(state) == CHANCE:
            if forced:
                outcome = forced.popleft()
                if outcome is None:
                    outcome = game.sample_chance(state, self.np_random)[0]
            else:
                if not sampled:
                    sampled = game.sample_chance(state, self.np_random)[::-1]
                outcome = sampled.pop()
            game.apply(state, outcome)

    def _finish_step(self) -> None:
        player = self.game.current_player(self.state)
        info = self.game.info(self.state)
        for a in self.agents:
            self.infos[a] = info
        if player == TERMINAL:
            # agent_selection stays on the last mover; _was_dead_step walks the others.
            for a in self.agents:
                self.terminations[a] = True
        else:
            self.agent_selection = self.possible_agents[player]

    def _penalize(self, seat: int) -> None:
        for i, a in enumerate(self.possible_agents):
            self.rewards[a] = self.illegal_reward if i == seat else 0.0
            self.terminations[a] = True
            self.infos[a] = {**self.infos[a], "illegal_action": i == seat}
        self._accumulate_rewards()


def wrap(raw: AECEnv) -> AECEnv:
    """The standard wrapper stack, as PettingZoo classic envs use it."""
    return wrappers.OrderEnforcingWrapper(raw)


__all__ = ["ILLEGAL_ACTION_POLICIES", "ParlourAECEnv", "wrap"]
