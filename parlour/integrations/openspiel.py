"""Every Parlour game as an OpenSpiel (``pyspiel``) game.

Importing this module registers one pyspiel game per env, named ``parlour_`` plus the
env name without its version (``parlour_german_whist``, ``parlour_forty_fives``,
``parlour_fuenfzehnern``, ``parlour_herzeln``, ``parlour_fuenfzehn_tot``)::

    import pyspiel
    import parlour.integrations.openspiel  # noqa: F401  (registers the games)

    game = pyspiel.load_game("parlour_fuenfzehn_tot", {"players": 2})

OpenSpiel's algorithms (MCTS, CFR, exploitability, and through ``rl_environment`` its
PyTorch learners: DQN, NFSP, policy gradient, Deep CFR, ESCHER) then run on Parlour's
own rules engines: this module only translates, it holds no rules. ISMCTS (OpenSpiel's
Python ``ISMCTSBot``) runs on the card games with `resample_from_infostate` as its
resampler (pyspiel's C++ ``ISMCTSBot`` does not call a Python game's resampler);
ISMCTS refuses the perfect-information dice game.

Parameters
    The env's options (``envs.make(name, **options)``) are the game parameters, with the
    env's defaults. pyspiel parameters cannot be None, so an option whose env default is
    None (meaning "as the variant says") is declared with a placeholder that stands for
    None: ``-1`` for an integer option, ``""`` for a string option, and for a yes/no
    option the integers ``-1`` (the variant's default), ``0`` (False) and ``1`` (True).
    A value such as Forty-Fives' ``packets="3+2"`` is spelt ``"3then2"`` (pyspiel
    would read ``3+2`` in a game string as a malformed number).
    The env's reset options become parameters too: ``dealer`` (card games; ``-1`` leaves
    the first dealer to chance), and for Fünfzehn – tot ``starter`` (``-1``: the
    roll-off decides) and ``dice`` (the faces in rolling order, comma-separated, ``?``
    for a die left to chance, e.g. ``"3,?,6"``; later dice are random). Scripting the
    dice turns those chance nodes into fixed moves, which is how a tree small enough for
    exact solvers is made.

Chance
    Parlour engines have explicit chance nodes with listed outcomes and probabilities
    (`Game.chance_outcomes`); they are OpenSpiel chance nodes one for one (one card per
    node when dealing, one face per die). `Game.sample_chance`, which may draw a whole
    shuffle at once, is not used here.

Observations
    ``observation_tensor`` is the env's observation vector (the game's encoder, its
    layout in the env docstring); ``observation_string`` is the engine's text view from
    that seat. ``information_state_string`` is perfect recall: a digest of everything
    the seat has observed after every move so far, and of its own actions (a
    32-character hex key, for algorithms that only compare information states).
    ``information_state_tensor`` (what ``rl_environment`` and OpenSpiel's learning
    algorithms read) is the observation vector followed by the seat's own actions:
    ``OWN_MOVES`` (32) slots of ``num_distinct_actions`` each, slot ``i`` one-hot on
    the seat's ``i``-th own action, or its last 32 actions (oldest first) once it has
    made more. Size ``observation_size + 32 * num_actions``: German Whist
    434 + 32 x 52 = 2098, Fünfzehnern 330 + 32 x 36 = 1482, Herzeln
    522 + 32 x 97 = 3626, Forty-Fives 495 + 32 x 168 = 5871, Fünfzehn – tot
    56 + 32 x 2 = 120. The encoders hold what the present shows of the past (hand,
    cards played, tricks, scores); the action slots add what the seat did itself. In a
    German Whist or Fünfzehnern game (at most 26 and 8 own moves) that is the whole of
    the seat's own history; the longer games (several deals, or Fünfzehn – tot's
    unbounded replays) keep a bounded recent history, so there two information states
    that differ only in own moves made long ago share a tensor.

Returns
    ``returns()`` are the engine's returns (paid as the game scores, so ``rewards()`` is
    the change made by the last move); utility bounds are each game's score range.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import re
import sys
from collections import deque
from typing import Any, ClassVar

import numpy as np
import pyspiel

from parlour import envs
from parlour.envs.core.engine import CHANCE, TERMINAL, Game

PREFIX = "parlour_"
#: env options that drive the env rather than define the game
_DRIVER_OPTIONS = ("render_mode", "illegal_action")
#: reset options that become game parameters, with the value that means "not set"
_RESET_PARAMETERS: dict[str, Any] = {"dealer": -1, "starter": -1, "dice": ""}
#: string values pyspiel's game-string parser would take for a (bad) number
_NUMBER_LIKE = re.compile(r"[0-9]+(\+[0-9]+)+")
#: a length bound for games with none of their own (Fünfzehn – tot replays a round in
#: which everybody busts, so its length has no finite bound)
_UNBOUNDED_LENGTH = 100_000
#: how many of a seat's own actions the information-state tensor holds (the last ones)
OWN_MOVES = 32
#: how many histories' information-state digests a game keeps
_SEEN_CACHE_SIZE = 200_000


def game_name(env_name: str) -> str:
    """The pyspiel name of an env (``german_whist_v0`` -> ``parlour_german_whist``)."""
    if env_name not in envs.names():
        raise ValueError(f"unknown env {env_name!r}; known: {', '.join(envs.names())}")
    return PREFIX + env_name.rsplit("_v", 1)[0]


def _option_specs(env_name: str) -> dict[str, tuple[Any, str]]:
    """Each game option of ``env_name`` -> (pyspiel default, kind), kind being
    ``"plain"`` or the placeholder convention for a None default."""
    params = inspect.signature(envs.module(env_name).raw_env.__init__).parameters
    out: dict[str, tuple[Any, str]] = {}
    for key, p in params.items():
        if key == "self" or key in _DRIVER_OPTIONS:
            continue
        if isinstance(p.default, str) and _NUMBER_LIKE.fullmatch(p.default):
            out[key] = (p.default.replace("+", "then"), "then")
            continue
        if p.default is not None:
            out[key] = (p.default, "plain")
            continue
        note = str(p.annotation)
        if note.startswith("bool"):
            out[key] = (-1, "tristate")
        elif note.startswith("int"):
            out[key] = (-1, "int")
        elif note.startswith("str"):
            out[key] = ("", "str")
        else:  # a new option type must get a placeholder convention here first
            raise TypeError(
                f"{env_name}: no pyspiel parameter for option {key}: {note}"
            )
    return out


def _from_parameter(key: str, value: Any, kind: str) -> Any:
    """A pyspiel parameter value back to the env option it stands for."""
    if kind == "plain":
        return value
    if kind == "tristate":
        if value not in (-1, 0, 1):
            raise ValueError(
                f"parameter {key} must be -1 (the variant's default), 0 (False) or "
                f"1 (True), got {value!r}"
            )
        return None if value == -1 else bool(value)
    if kind == "int":
        return None if value == -1 else value
    if kind == "then":
        return value.replace("then", "+")
    return None if value == "" else value


def _reset_options(key: str, value: Any) -> dict[str, Any]:
    """A reset-option parameter as the env's reset options ({} when not set)."""
    if value == _RESET_PARAMETERS[key]:
        return {}
    if key != "dice":
        return {key: value}
    faces: list[int | None] = []
    for token in value.split(","):
        token = token.strip()
        if token == "?":
            faces.append(None)
        elif token.isdigit():
            faces.append(int(token))
        else:
            raise ValueError(
                f"parameter dice must be faces 1..6 or '?' separated by commas, got "
                f"{value!r}"
            )
    return {"dice": faces}


def _utility_bounds(env_name: str, engine: Game) -> tuple[float, float]:
    """The lowest and highest return any seat can finish with (each game's score
    range: `Game.utility_bounds` in its rules.py, next to `returns`)."""
    return engine.utility_bounds()


def _max_chance_outcomes(engine: Game) -> int:
    """One more than the largest chance outcome id: the cards of the pack (or the
    dealer's seat), or the faces 1..6 of a die."""
    deck = getattr(engine, "deck", None) or getattr(
        sys.modules[type(engine).__module__], "DECK", None
    )
    if deck is not None:
        return max(deck.size, engine.num_players)
    return 7


class _EngineRef:
    """The engine of a game, shared by all its states: copying a state keeps the
    reference, and pickling (pyspiel pickles a Python game's attributes when it
    serialises) stores the env name and options, from which the engine is rebuilt."""

    __slots__ = ("env_name", "options", "value", "seen_cache")

    def __init__(self, env_name: str, options: dict[str, Any]):
        self.env_name = env_name
        self.options = options
        self.value: Game = envs.make(env_name, raw=True, **options).game
        #: history -> perfect-recall digests (CFR asks for each node's every pass)
        self.seen_cache: dict[tuple[int, ...], list[bytes]] = {}

    def __deepcopy__(self, memo: dict) -> _EngineRef:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (_EngineRef, (self.env_name, self.options))


class _Cloned:
    """The engine state, copied with the engine's own ``clone()`` (pyspiel clones a
    Python state by deep-copying each of its attributes)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __deepcopy__(self, memo: dict) -> _Cloned:
        return _Cloned(self.value.clone())


class ParlourGame(pyspiel.Game):
    """A Parlour env's game as a pyspiel game; one subclass per env (`register`)."""

    env_name: ClassVar[str]
    game_type: ClassVar[pyspiel.GameType]

    def __init__(self, params: dict[str, Any] | None = None):
        params = dict(params or {})
        specs = _option_specs(self.env_name)
        options = {
            k: _from_parameter(k, params[k], kind)
            for k, (_, kind) in specs.items()
            if k in params
        }
        self._ref = _EngineRef(self.env_name, options)  # ValueError on a bad option
        engine = self._ref.value
        reset: dict[str, Any] = {}
        for key in sorted(engine.reset_option_keys & set(_RESET_PARAMETERS)):
            reset.update(_reset_options(key, params.get(key, _RESET_PARAMETERS[key])))
        #: the chance outcomes the parameters fix (None: left to chance), checked now
        self.forced: tuple[int | None, ...] = tuple(engine.forced_chance(reset))
        low, high = _utility_bounds(self.env_name, engine)
        zero_sum = bool(getattr(engine, "zero_sum", True))
        game_type = _game_type(self.env_name, engine, zero_sum)
        length = getattr(engine, "max_game_length", None) or _UNBOUNDED_LENGTH
        info = pyspiel.GameInfo(
            num_distinct_actions=engine.num_actions,
            max_chance_outcomes=_max_chance_outcomes(engine),
            num_players=engine.num_players,
            min_utility=low,
            max_utility=high,
            utility_sum=0.0 if zero_sum else None,
            max_game_length=int(length),
        )
        super().__init__(game_type, info, params)

    @property
    def engine(self) -> Game:
        """The Parlour rules engine (`parlour.envs.core.engine.Game`) of this game."""
        return self._ref.value

    def new_initial_state(self) -> ParlourState:
        """The start of a game: the fixed chance outcomes applied, the rest left to
        chance nodes."""
        return ParlourState(self)

    def make_py_observer(
        self,
        iig_obs_type: pyspiel.IIGObservationType | None = None,
        params: dict[str, Any] | None = None,
    ) -> _Observer:
        """The observer pyspiel calls for observation and information-state views."""
        return _Observer(self.engine, iig_obs_type, params)


class ParlourState(pyspiel.State):
    """A position of a Parlour game: the engine state plus what each seat has seen."""

    def __init__(self, game: ParlourGame):
        super().__init__(game)
        engine = game.engine
        self._engine = game._ref
        self._cell = _Cloned(engine.new_state())
        self._forced = deque(game.forced)
        n = engine.num_players
        self._last_returns = [0.0] * n
        self._rewards = [0.0] * n
        # Perfect-recall digests are kept only by the replays `_Observer` makes (most
        # algorithms never ask for information states; MCTS runs 30% faster without).
        self._seen: list[bytes] | None = None
        self._advance()
        self._returns_now = list(engine.returns(self._cell.value))

    # --- pyspiel API ------------------------------------------------------------------
    def current_player(self) -> int:
        player = self._engine.value.current_player(self._cell.value)
        if player == CHANCE:
            return pyspiel.PlayerId.CHANCE
        if player == TERMINAL:
            return pyspiel.PlayerId.TERMINAL
        return player

    def _legal_actions(self, player: int) -> list[int]:
        return self._engine.value.legal_actions(self._cell.value)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return self._engine.value.chance_outcomes(self._cell.value)

    def _apply_action(self, action: int) -> None:
        engine = self._engine.value
        player = engine.current_player(self._cell.value)
        if player == CHANCE and self._forced:
            self._forced.popleft()  # the None that left this node to chance
        engine.apply(self._cell.value, action)
        self._advance()
        if self._seen is not None:
            self._observe_all(player, action)
        # OpenSpiel reads rewards at decision nodes only, so a payment made on the way
        # into a chance node (the last trick of a deal) is carried to the next one.
        if player != CHANCE:
            self._last_returns = self._returns_now
        self._returns_now = list(engine.returns(self._cell.value))
        self._rewards = [
            r - q for r, q in zip(self._returns_now, self._last_returns, strict=True)
        ]

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"chance outcome {action}"
        return self._engine.value.action_name(action)

    def is_terminal(self) -> bool:
        return self._engine.value.current_player(self._cell.value) == TERMINAL

    def returns(self) -> list[float]:
        return [float(r) for r in self._engine.value.returns(self._cell.value)]

    def rewards(self) -> list[float]:
        return [float(r) for r in self._rewards]

    def __str__(self) -> str:
        return self._engine.value.render(self._cell.value)

    # --- internals --------------------------------------------------------------------
    @property
    def engine_state(self) -> Any:
        """The Parlour engine state of this position (read it, do not change it)."""
        return self._cell.value

    def _advance(self) -> None:
        """Apply the chance outcomes the parameters fix, as their nodes come up."""
        engine, state, forced = self._engine.value, self._cell.value, self._forced
        while (
            forced and forced[0] is not None and engine.current_player(state) == CHANCE
        ):
            engine.apply(state, forced.popleft())

    def seen(self, player: int) -> bytes:
        """``player``'s perfect-recall digest: what it observed after every move so
        far and its own actions, folded into 16 bytes."""
        cache = self._engine.seen_cache
        history = tuple(self.history())
        digests = cache.get(history)
        if digests is not None:
            return digests[player]
        parent = cache.get(history[:-1]) if history else None
        if parent is not None:
            # One fold on the parent's digests: the usual case while playing forward.
            last = self.full_history()[-1]
            self._seen = list(parent)
            self._observe_all(last.player, last.action)
            digests, self._seen = self._seen, None
        else:
            # Replay from the start, keeping every prefix's digests on the way.
            replay = self.get_game().new_initial_state()
            replay._seen = [b""] * len(self._returns_now)
            replay._observe_all(None, None)
            if len(cache) >= _SEEN_CACHE_SIZE:
                cache.clear()
            cache[()] = list(replay._seen)
            for i, action in enumerate(history):
                replay.apply_action(action)
                cache[history[: i + 1]] = list(replay._seen)
            digests = replay._seen
        if len(cache) >= _SEEN_CACHE_SIZE:
            cache.clear()
        cache[history] = digests
        return digests[player]

    def _observe_all(self, actor: int | None, action: int | None) -> None:
        """Fold every seat's present observation (and the actor's own action) into its
        perfect-recall digest."""
        engine, state = self._engine.value, self._cell.value
        assert self._seen is not None
        for p in range(len(self._seen)):
            own = action if p == actor else None
            self._seen[p] = _fold(self._seen[p], engine.observe(state, p), own)


def _fold(digest: bytes, observation: np.ndarray, own_action: int | None) -> bytes:
    """A seat's perfect-recall digest after one more move: the previous digest, what
    the seat now observes and, if the move was its own, the action."""
    h = hashlib.blake2b(digest, digest_size=16)
    h.update(observation.tobytes())
    if own_action is not None:
        h.update(b"played %d" % own_action)
    return h.digest()


def _replay_digests(
    game: ParlourGame, actions: list[int], player: int, stop: list[bytes] | None
) -> list[bytes] | None:
    """``player``'s digest after the root and after each of ``actions`` (a full
    history, chance outcomes included), or None if an action is not legal where it is
    applied or (with ``stop``, the digests to keep to) the seat would notice a
    difference."""
    engine = game.engine
    state = engine.new_state()
    forced = deque(game.forced)

    def advance() -> None:
        while (
            forced and forced[0] is not None and engine.current_player(state) == CHANCE
        ):
            engine.apply(state, forced.popleft())

    advance()
    out = [_fold(b"", engine.observe(state, player), None)]
    for i, action in enumerate(actions):
        actor = engine.current_player(state)
        if actor == CHANCE:
            if action not in {o for o, _ in engine.chance_outcomes(state)}:
                return None
            if forced:
                forced.popleft()
        elif actor == TERMINAL or action not in engine.legal_actions(state):
            return None
        engine.apply(state, action)
        advance()
        own = action if actor == player else None
        out.append(_fold(out[-1], engine.observe(state, player), own))
        if stop is not None and out[-1] != stop[i + 1]:
            return None
    return out


def resample_from_infostate(
    state: ParlourState,
    player: int,
    rng: np.random.Generator | None = None,
    swaps: int = 32,
) -> ParlourState:
    """A state ``player`` cannot tell from ``state`` (the same information state),
    with the hidden chance outcomes drawn again: the resampler ISMCTS needs (give it
    to OpenSpiel's Python ``ISMCTSBot`` with ``set_resampler``).

    It is generic, a Markov chain over histories: starting from the true one it
    proposes ``swaps`` exchanges of two chance outcomes of the same run of chance nodes
    (two cards of one deal), keeping each exchange after which every move is still
    legal and the seat's observations and own actions are unchanged. The exchanges
    are symmetric, so the chain's stationary distribution is uniform over the
    histories it can reach; a short chain is an approximation of that.
    """
    rng = np.random.default_rng() if rng is None else rng
    game = state.get_game()
    steps = state.full_history()
    actions = [s.action for s in steps]
    chance = [i for i, s in enumerate(steps) if s.player == pyspiel.PlayerId.CHANCE]
    runs: list[list[int]] = []
    for i in chance:
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    runs = [r for r in runs if len(r) > 1]
    target = _replay_digests(game, actions, player, None)
    if runs and target is not None:
        sizes = np.array([len(r) for r in runs], dtype=float)
        for _ in range(swaps):
            run = runs[int(rng.choice(len(runs), p=sizes / sizes.sum()))]
            i, j = (int(x) for x in rng.choice(run, size=2, replace=False))
            actions[i], actions[j] = actions[j], actions[i]
            if _replay_digests(game, actions, player, target) is None:
                actions[i], actions[j] = actions[j], actions[i]
    out = game.new_initial_state()
    for action in actions:
        out.apply_action(action)
    return out


class _Observer:
    """pyspiel's observer protocol: ``tensor``/``dict`` filled by ``set_from`` and a
    string by ``string_from``, for one observation type."""

    def __init__(
        self,
        engine: Game,
        iig_obs_type: pyspiel.IIGObservationType | None,
        params: dict[str, Any] | None,
    ):
        if params:
            raise ValueError(f"observation parameters are not supported, got {params}")
        obs_type = iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False)
        if obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or not (
            obs_type.public_info
        ):
            raise ValueError(
                "Parlour games observe one seat's view (public and private "
                f"information); not supported: {obs_type}"
            )
        self._engine = engine
        self._perfect_recall = obs_type.perfect_recall
        size = engine.observation_size
        extra = OWN_MOVES * engine.num_actions if self._perfect_recall else 0
        self.tensor = np.zeros(size + extra, np.float32)
        self.dict = {"observation": self.tensor[:size]}
        if self._perfect_recall:
            self.dict["own_actions"] = self.tensor[size:].reshape(
                OWN_MOVES, engine.num_actions
            )

    def set_from(self, state: ParlourState, player: int) -> None:
        self.dict["observation"][:] = self._engine.observe(state._cell.value, player)
        if self._perfect_recall:
            own = self.dict["own_actions"]
            own[:] = 0.0
            mine = [s.action for s in state.full_history() if s.player == player]
            for slot, action in enumerate(mine[-OWN_MOVES:]):
                own[slot, action] = 1.0

    def string_from(self, state: ParlourState, player: int) -> str:
        if self._perfect_recall:
            return f"player {player} seen {state.seen(player).hex()}"
        return self._engine.render(state._cell.value, viewer=player)


def _game_type(env_name: str, engine: Game | None, zero_sum: bool) -> pyspiel.GameType:
    """The pyspiel game type of an env (``engine`` None: the registered defaults)."""
    specs = _option_specs(env_name)
    default_engine = engine or envs.make(env_name, raw=True).game
    params: dict[str, Any] = {k: default for k, (default, _) in specs.items()}
    for key in sorted(default_engine.reset_option_keys & set(_RESET_PARAMETERS)):
        params[key] = _RESET_PARAMETERS[key]
    players = _player_range(env_name)
    record = envs.record(env_name)
    perfect = record.perfect_information
    return pyspiel.GameType(
        short_name=game_name(env_name),
        long_name=f"Parlour {env_name}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=(
            pyspiel.GameType.Information.PERFECT_INFORMATION
            if perfect
            else pyspiel.GameType.Information.IMPERFECT_INFORMATION
        ),
        utility=(
            pyspiel.GameType.Utility.ZERO_SUM
            if zero_sum
            else pyspiel.GameType.Utility.GENERAL_SUM
        ),
        reward_model=(
            pyspiel.GameType.RewardModel.REWARDS
            if record.pays_as_it_goes
            else pyspiel.GameType.RewardModel.TERMINAL
        ),
        max_num_players=players[1],
        min_num_players=players[0],
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=params,
    )


@functools.cache
def _player_range(env_name: str) -> tuple[int, int]:
    """The fewest and most players over the env's variants."""
    counts = [
        envs.make(env_name, raw=True, **opts).game.num_players
        for opts in envs.VARIANTS.get(env_name, [{}])
    ]
    counts.append(envs.make(env_name, raw=True).game.num_players)
    counts += envs.record(env_name).players
    return min(counts), max(counts)


_REGISTERED: dict[str, type[ParlourGame]] = {}


def register() -> list[str]:
    """Register every Parlour env with pyspiel (done on import; calling it again does
    nothing) and return the game names."""
    for env_name in envs.names():
        short = game_name(env_name)
        if short in _REGISTERED:
            continue
        default = envs.make(env_name, raw=True).game
        game_type = _game_type(
            env_name, default, bool(getattr(default, "zero_sum", True))
        )
        camel = "".join(part.title() for part in short.split("_"))
        cls = type(
            f"{camel}Game",
            (ParlourGame,),
            {"env_name": env_name, "game_type": game_type, "__module__": __name__},
        )
        pyspiel.register_game(game_type, cls)
        _REGISTERED[short] = cls
    return sorted(_REGISTERED)


def load_game(env_name: str, **options: Any) -> pyspiel.Game:
    """``pyspiel.load_game`` by env name with options as keywords (None values are
    translated to the placeholders the module docstring lists)."""
    specs = _option_specs(env_name)
    params: dict[str, Any] = {}
    for key, value in options.items():
        kind = specs.get(key, (None, "plain"))[1]
        if value is None and kind == "str":
            value = ""
        elif value is None:
            value = -1
        elif kind == "tristate":
            value = int(bool(value))
        elif kind == "then":
            value = value.replace("+", "then")
        elif key == "dice" and not isinstance(value, str):
            value = ",".join("?" if f is None else str(f) for f in value)
        params[key] = value
    return pyspiel.load_game(game_name(env_name), params)


register()

__all__ = [
    "OWN_MOVES",
    "PREFIX",
    "ParlourGame",
    "ParlourState",
    "game_name",
    "load_game",
    "register",
    "resample_from_infostate",
]
