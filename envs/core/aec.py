"""One generic PettingZoo AEC adapter for every Parlour engine.

The adapter only maps seats to agent names, owns the seeded ``np_random``, samples
chance nodes until a player has to decide, turns engine returns into PettingZoo rewards
and handles the terminal/illegal-action policy in one place (as pgx's ``core.Env.step``
does). The rules live in the engine; nothing here knows which game it is running.

``observe`` and ``step`` run once per move of every training game, so they are written
for speed (``benchmarks/env_speed.py`` measures them): engine methods and dicts are
bound to locals, and no work is done twice. An engine may define
``legal_bits(state) -> int``, the legal actions of the player to act as a bitmask (bit
``a`` set exactly when ``a`` is in ``legal_actions(state)``); the adapter then builds
the action mask from it without going through a Python list.
"""

from __future__ import annotations

import inspect
import warnings
from collections import deque
from collections.abc import Callable, Mapping
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

    Observations are ``{"observation": float32 vector in [0, 1], "action_mask": int8
    vector}``; the mask is all zeros for an agent that is not to act. With
    ``illegal_action="raise"`` (the default) an illegal action raises
    `IllegalActionError` naming the legal ones; with ``"penalize"`` the offender gets
    ``illegal_reward`` and the episode terminates, as PettingZoo's
    ``TerminateIllegalWrapper`` does, for training code that prefers it (and for
    tools that sample actions without the mask, such as PettingZoo's
    ``parallel_seed_test``).

    ``infos[agent]`` is one dict per agent with the same keys and types at every step,
    so that replay buffers (TorchRL, Tianshou) can store it: ``"return"`` (float, the
    agent's total return so far, as the engine scores it) and ``"illegal_action"``
    (bool, True for the offender of a penalised move). The game's rich public record
    (tricks, contracts, dice, winners …) is `details()`. ``state()`` is PettingZoo's
    global-state hook and raises NotImplementedError (there is no ``state_space``); the
    engine state is ``game_state``.
    """

    metadata = {
        "render_modes": ["human", "ansi"],
        "is_parallelizable": False,
        "render_fps": 1,
    }

    #: the engine class a game's ``raw_env`` drives (None on this base class)
    game_class: type[Game] | None = None

    def __init_subclass__(
        cls, game: type[Game] | None = None, name: str | None = None, **kwargs: Any
    ) -> None:
        """A game's env class: ``class raw_env(ParlourAECEnv, game=Engine,
        name="<game>_v0")``. Its ``__init__`` takes the engine's constructor keywords
        (with their signature, which ``envs.make`` and ``envs.game_options`` read) and
        ``render_mode`` and ``illegal_action``, so each game option is declared once,
        on the engine; ``name`` is PettingZoo's ``metadata["name"]``."""
        super().__init_subclass__(**kwargs)
        if name is not None:
            cls.metadata = {**cls.metadata, "name": name}
        if game is not None:
            cls.game_class = game
            cls.__init__ = _engine_init(game)

    def __init__(
        self,
        game: Game,
        render_mode: str | None = None,
        illegal_action: str = "raise",
        illegal_reward: float = -1.0,
    ):
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be None, 'human' or 'ansi', got {render_mode!r}"
            )
        if illegal_action not in ILLEGAL_ACTION_POLICIES:
            raise ValueError(
                f"illegal_action must be one of {list(ILLEGAL_ACTION_POLICIES)}, "
                f"got {illegal_action!r}"
            )
        self.game = game
        self.render_mode = render_mode
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        if self.metadata.get("name") != game.name:  # set on each env's class
            self.metadata = {**self.metadata, "name": game.name}
        self.possible_agents = [f"player_{i}" for i in range(game.num_players)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        n = game.num_actions
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(
                        0.0, 1.0, shape=(game.observation_size,), dtype=np.float32
                    ),
                    "action_mask": spaces.Box(0, 1, shape=(n,), dtype=np.int8),
                }
            )
            for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(n) for a in self.possible_agents}
        self._num_actions = n
        self._mask_bytes = (n + 7) // 8
        self._legal_bits = getattr(game, "legal_bits", None)
        self._zero_mask = np.zeros(n, dtype=np.int8)
        self.game_state = None
        self.np_random, self.np_random_seed = seeding.np_random(None)

    # --- PettingZoo API ---------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(
        self, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> None:
        if seed is not None:
            self.np_random, self.np_random_seed = seeding.np_random(seed)
        options = {} if options is None else options
        if not isinstance(options, Mapping):
            raise ValueError(
                f"reset options must be a dict, got {type(options).__name__}"
            )
        allowed = {"deal", "deals"} | set(self.game.reset_option_keys)
        unknown = sorted(set(options) - allowed)
        if unknown:
            # A warning, not an error: the ecosystem's checkers probe reset with keys
            # they make up (PettingZoo's api_test passes {"options": 1}); a typo still
            # shows, naming the keys that would have worked.
            warnings.warn(
                f"unknown reset option(s) {unknown} for {self.game.name} ignored; "
                f"allowed: {sorted(allowed)}",
                UserWarning,
                stacklevel=2,
            )
            options = {k: v for k, v in options.items() if k in allowed}
        forced = deque(self.game.forced_chance(options))
        self._forced_ran_out = self.game.forced_ran_out(options)
        self.game_state = self.game.new_state()
        # Outcomes beyond the first decision (later deals of a match, later dice) are
        # used as their chance nodes come up; any left when the episode ends go unused.
        self._forced = forced
        self._advance_chance(forced)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self._last_returns = list(self.game.returns(self.game_state))
        self.infos = {
            a: {"return": float(r), "illegal_action": False}
            for a, r in zip(self.agents, self._last_returns, strict=True)
        }
        self._paid = False  # whether self.rewards holds a nonzero payment
        self.agent_selection = self.possible_agents[0]
        self._finish_step(self.game.current_player(self.game_state))

    def step(self, action: int | None) -> None:
        try:
            agent = self.agent_selection
        except AttributeError:
            raise _not_reset("step") from None
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise IllegalActionError(
                f"{agent} is to act and must choose an action; None is only for "
                "finished agents"
            )
        if type(action) is not int:  # a plain int, the usual case, needs no check
            action = _as_action(action)
        if not 0 <= action < self._num_actions:
            raise IllegalActionError(
                f"action {action} is out of range 0..{self._num_actions - 1}"
            )
        game, state = self.game, self.game_state
        cumulative = self._cumulative_rewards
        cumulative[agent] = 0.0
        try:
            game.apply(state, action)
        except IllegalActionError:
            if self.illegal_action == "raise":
                raise
            self._penalize(self.agent_name_mapping[agent])
            return
        player = game.current_player(state)
        if player == CHANCE:
            self._advance_chance(self._forced)
            player = game.current_player(state)
        # Rewards are the change in the engine's returns. Every agent is alive here
        # (they all finish together), so this loop also does _accumulate_rewards' work.
        # Most moves change no return: then only last move's rewards need zeroing.
        returns = game.returns(state)
        last = self._last_returns
        rewards = self.rewards
        if returns != last:
            infos = self.infos
            for i, a in enumerate(self.possible_agents):
                reward = float(returns[i] - last[i])
                rewards[a] = reward
                cumulative[a] += reward
                # a new dict, so that an info kept by the caller does not change
                infos[a] = {**infos[a], "return": float(returns[i])}
            self._last_returns = list(returns)
            self._paid = True
        elif self._paid:
            for a in rewards:
                rewards[a] = 0.0
            self._paid = False
        self._finish_step(player)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if self.game_state is None:
            raise _not_reset("observe")
        seat = self.agent_name_mapping[agent]
        return {
            "observation": self.game.observe(self.game_state, seat),
            "action_mask": self._mask(seat),
        }

    def last(
        self, observe: bool = True
    ) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self.game_state is None:
            raise _not_reset("last")
        return super().last(observe)

    def render(self) -> str | None:
        """The text view of the table: returned with ``render_mode="ansi"``, printed
        with ``"human"`` (PettingZoo's classic games print too), nothing with None."""
        if self.render_mode is None:
            return None
        if self.game_state is None:
            raise _not_reset("render")
        text = self.game.render(self.game_state)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    # --- Parlour extras ---------------------------------------------------------------
    def details(self) -> dict[str, Any]:
        """The game's public record of the episode so far: scores, tricks, contract,
        dice, winners … (the engine's ``info``; keys per game, documented in the env
        module). Richer than ``infos``, which hold only what a replay buffer stores."""
        if self.game_state is None:
            raise _not_reset("details")
        return self.game.info(self.game_state)

    def action_name(self, action: int) -> str:
        """The conventional name of an action id (``"QS"`` for a card)."""
        return self.game.action_name(action)

    def action_id(self, name: str) -> int:
        """The action id of a name (card names in any accepted spelling)."""
        return self.game.action_id(name)

    def legal_actions(self, agent: str | None = None) -> list[int]:
        """The legal actions of ``agent`` (default: the agent to act); empty when it is
        not that agent's turn."""
        if self.game_state is None:
            raise _not_reset("legal_actions")
        seat = self.agent_name_mapping[agent or self.agent_selection]
        if self.game.current_player(self.game_state) != seat:
            return []
        return self.game.legal_actions(self.game_state)

    # --- internals --------------------------------------------------------------------
    def _mask(self, seat: int) -> np.ndarray:
        """The int8 action mask of ``seat``: its legal actions; all zeros off-turn."""
        game, state = self.game, self.game_state
        if game.current_player(state) != seat:
            return self._zero_mask.copy()
        if self._legal_bits is not None:
            bits = self._legal_bits(state).to_bytes(self._mask_bytes, "little")
            return np.unpackbits(
                np.frombuffer(bits, dtype=np.uint8),
                count=self._num_actions,
                bitorder="little",
            ).view(np.int8)
        # Filling a bytearray and viewing it as int8 is about twice as fast as numpy's
        # fancy indexing with a Python list, which first converts the list to an array.
        buf = bytearray(self._num_actions)
        for action in game.legal_actions(state):
            buf[action] = 1
        return np.frombuffer(buf, dtype=np.int8)

    def _advance_chance(self, forced: deque) -> None:
        """Apply chance outcomes until a player has to decide: the forced ones (reset
        options) first, ``None`` among them meaning "sample this one", then sampled
        ones."""
        game, state, rng = self.game, self.game_state, self.np_random
        current_player, apply = game.current_player, game.apply
        while forced and current_player(state) == CHANCE:
            outcome = forced.popleft()
            if outcome is None:
                outcome = game.sample_chance(state, rng)[0]
            apply(state, outcome)
        if self._forced_ran_out is not None and current_player(state) == CHANCE:
            raise ValueError(self._forced_ran_out)
        # sample_chance may draw several outcomes that follow each other (a whole
        # shuffle): apply them while the state is still a chance node, and draw again if
        # it still is one after the last.
        while current_player(state) == CHANCE:
            for outcome in game.sample_chance(state, rng):
                apply(state, outcome)
                if current_player(state) != CHANCE:
                    break

    def _finish_step(self, player: int) -> None:
        """Hand the turn to ``player`` or end the game."""
        if player == TERMINAL:
            # agent_selection stays on the last mover; _was_dead_step walks the others.
            terminations = self.terminations
            for a in self.agents:
                terminations[a] = True
        else:
            self.agent_selection = self.possible_agents[player]

    def _penalize(self, seat: int) -> None:
        for i, a in enumerate(self.possible_agents):
            self.rewards[a] = self.illegal_reward if i == seat else 0.0
            self.terminations[a] = True
            if i == seat:
                self.infos[a] = {**self.infos[a], "illegal_action": True}
        self._accumulate_rewards()


def _engine_init(game_class: type[Game]) -> Callable[..., None]:
    """The ``__init__`` of an env class driving ``game_class``: the game options go to
    the engine, the driver options to `ParlourAECEnv`."""

    def __init__(
        self: ParlourAECEnv,
        *args: Any,
        render_mode: str | None = None,
        illegal_action: str = "raise",
        **options: Any,
    ) -> None:
        ParlourAECEnv.__init__(
            self,
            game_class(*args, **options),
            render_mode=render_mode,
            illegal_action=illegal_action,
        )

    game_params = list(inspect.signature(game_class.__init__).parameters.values())
    driver = inspect.signature(__init__).parameters
    __init__.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [*game_params, driver["render_mode"], driver["illegal_action"]]
    )
    __init__.__doc__ = f"A new env; the game options are `{game_class.__name__}`'s."
    return __init__


def wrapped(raw_class: type[ParlourAECEnv]) -> Callable[..., AECEnv]:
    """A game module's ``env()``: ``raw_class`` with PettingZoo's wrappers (`wrap`)."""

    def env(**options: Any) -> AECEnv:
        return wrap(raw_class(**options))

    name = raw_class.metadata["name"]
    env.__doc__ = f"The wrapped ``{name}`` env (its module lists the options)."
    env.__module__ = raw_class.__module__
    return env


def _not_reset(method: str) -> RuntimeError:
    return RuntimeError(f"call reset() before {method}(): the env has no game yet")


def _as_action(action: Any) -> int:
    """``action`` as an int if it is an integer (numpy integers and 0-d integer arrays
    included); anything else (``2.7``, ``True``, ``"2"``) is refused, not truncated."""
    if isinstance(action, np.ndarray) and action.shape == ():
        action = action[()]
    if isinstance(action, (int, np.integer)) and not isinstance(
        action, (bool, np.bool_)
    ):
        return int(action)
    raise IllegalActionError(
        f"action must be an integer, got {action!r} ({type(action).__name__})"
    )


class OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's `OrderEnforcingWrapper` (errors for use before ``reset``, the
    ``agent_iter`` step check) with the per-step attributes read straight from the
    wrapped env.

    The base wrapper reaches ``agent_selection``, ``terminations``, ``infos`` … through
    ``__getattr__`` (three Python calls per read, eight reads per step); here ``last``
    and the iterator's reads go to the env directly once it has been reset. Before
    ``reset`` they raise exactly as the base class does.
    """

    def last(
        self, observe: bool = True
    ) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            return super().last(observe)  # raises: nothing may be read before reset
        return self.env.last(observe)

    def step(self, action: Any) -> None:
        env = self.env
        if not self._has_reset or not env.agents:
            super().step(action)  # logs PettingZoo's error or warning
            return
        self._has_updated = True
        env.step(action)

    def agent_iter(self, max_iter: int = 2**63) -> _FastIterable:
        if not self._has_reset:
            return super().agent_iter(max_iter)  # logs PettingZoo's error
        return _FastIterable(self, max_iter)


class _FastIterable(wrappers.order_enforcing.AECOrderEnforcingIterable):
    def __iter__(self) -> _FastIterator:
        return _FastIterator(self.env, self.max_iter)


class _FastIterator(wrappers.order_enforcing.AECOrderEnforcingIterator):
    """PettingZoo's order-enforcing iterator reading the agent straight from the
    wrapped env: stops when no agent is left or after ``max_iter`` steps, and asserts
    that ``step`` or ``reset`` was called since the last agent it handed out."""

    def __next__(self) -> str:
        wrapper = self.env
        raw = wrapper.env
        if not raw.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert wrapper._has_updated, (
            "need to call step() or reset() in a loop over `agent_iter`"
        )
        wrapper._has_updated = False
        return raw.agent_selection


def wrap(raw: AECEnv) -> AECEnv:
    """The standard wrapper stack, as PettingZoo classic envs use it: order
    enforcing (`OrderEnforcing`, PettingZoo's wrapper with faster reads)."""
    return OrderEnforcing(raw)


__all__ = [
    "ILLEGAL_ACTION_POLICIES",
    "OrderEnforcing",
    "ParlourAECEnv",
    "wrap",
    "wrapped",
]
