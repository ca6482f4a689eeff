"""Agent specs: the strings that name agents (``random``, ``heuristic:-win_cheaply``,
``ckpt:runs/x@sample``, ``endgame:pimc:4`` …), parsed once into an `AgentSpec`.

``AgentSpec.parse(text)`` reads a spec and refuses a malformed one with a one-line
ValueError; ``str(spec)`` writes it back (the canonical form: parsing it gives the same
spec). What each kind is, is one row of the table `kinds()`: how its argument is
written, how it is built, which envs accept it, whether it plays a checkpoint's
weights and whether a Ray worker can play it. The built-in kinds are there with the
game records' own kinds (`parlour.envs.GameRecord.extra_kinds`: ``solver``,
``pimc:N``, ``optimal``, ``threshold:N``), read from the records on first use.

| form | what |
|---|---|
| ``random`` | uniform over the legal moves |
| ``heuristic[:+tip,-tip…]`` | the game's heuristic bot, strategy tips switched on/off |
| ``ckpt:PATH[@sym|@plain][@sample]`` | a checkpoint, or a run directory's latest one |
| ``pretrained[:NAME][@sym|@plain][@sample]`` | the game's shipped agent for its
  options, or the shipped model ``NAME`` (``parlour list`` names them) |
| ``expert`` | the shipped network with the game's search at play time
  (`parlour.agents.expert`) |
| ``endgame:SPEC`` | ``SPEC`` corrected by the game's exact solver |
| ``text:scripted`` | the scripted text player of `parlour.text` |
| ``solver``, ``pimc:N``, ``optimal``, ``threshold:N`` | the games' own kinds |

``@sample`` samples from the policy instead of playing its best move; ``@sym`` plays
the policy averaged over the renamings of the suits (envs whose record has
``suit_renaming``), ``@plain`` the network alone, and without either the checkpoint's
manifest chooses (`parlour.agents.checkpoint`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .. import envs
from .base import Agent

SAMPLE = "@sample"
#: ``suit_average`` -> its suffix: the suit-averaged policy, or the network alone
SUIT_SUFFIX = {True: "@sym", False: "@plain"}

# How a kind's argument is written after ``KIND:``.
NONE = "none"  # no argument
SWITCHES = "switches"  # +name,-name
PATH = "path"  # a path, required
NAME = "name"  # a name, optional (pretrained) or one of `Kind.names` (text)
NUMBER = "number"  # an integer N
SPEC = "spec"  # another spec


@dataclass(frozen=True)
class AgentSpec:
    """One parsed agent spec; ``str()`` gives its canonical text."""

    kind: str
    switches: tuple[tuple[str, bool], ...] = ()
    """``heuristic``: the strategy tips switched, in order (name, on)"""
    inner: AgentSpec | None = None
    """``endgame:SPEC``: the agent the solver corrects"""
    path: str = ""
    """``ckpt:PATH``: the checkpoint or run directory"""
    name: str = ""
    """``pretrained:NAME``: a shipped model's name; ``text:NAME``: the text player"""
    n: int | None = None
    """``pimc:N``, ``threshold:N``: the number"""
    sample: bool = False
    """``@sample``: sample from the policy instead of its best move"""
    suit_average: bool | None = None
    """``@sym`` (True): the policy averaged over the suit renamings; ``@plain``
    (False): the network alone; None: as the checkpoint's manifest says"""

    def __post_init__(self) -> None:
        # a spec made in code holds what its kind's text needs, as a parsed one does
        kind = kind_for(self.kind)
        missing = {
            NUMBER: self.n is None,
            SPEC: self.inner is None,
            PATH: not self.path,
        }.get(kind.argument, False)
        policy_only = self.sample or self.suit_average is not None
        if missing or (policy_only and not kind.samples):
            raise ValueError(f"not a {kind.word} spec: {self!r}")

    @classmethod
    def parse(cls, text: str, env_name: str | None = None) -> AgentSpec:
        """Parse a spec; one-line ValueError for a malformed one. With ``env_name``, a
        kind that env has not (``threshold:N`` for a card game) is refused too."""
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"agent spec must be a non-empty string, got {text!r}")
        text = text.strip()
        word, colon, arg = text.partition(":")
        suffixes: list[str] = []
        if not colon:  # pretrained@sample
            word, suffixes = _suffixes(word)
        kind = kind_for(word, env_name)
        if kind.samples and colon:
            arg, suffixes = _suffixes(arg)
        if suffixes and not kind.samples:
            raise ValueError(
                f"only ckpt:PATH and pretrained take {suffixes[0]}, got {text!r}"
            )
        averages = [on for on, suffix in SUIT_SUFFIX.items() if suffix in suffixes]
        if len(averages) > 1 or len(set(suffixes)) < len(suffixes):
            raise ValueError(
                f"write each of {SAMPLE} and one of {' '.join(SUIT_SUFFIX.values())} "
                f"at most once, got {text!r}"
            )
        suit_average = averages[0] if averages else None
        if suit_average and env_name is not None and env_name in envs.names():
            from ..training.policy import check_suit_renaming

            check_suit_renaming(env_name)
        return cls(
            word,
            sample=SAMPLE in suffixes,
            suit_average=suit_average,
            **kind.read(arg, env_name),
        )

    def __str__(self) -> str:
        return (
            self.kind
            + _ARGUMENT_TEXT[_table()[self.kind].argument](self)
            + policy_suffix(self.suit_average, self.sample)
        )

    @property
    def base(self) -> AgentSpec:
        """The spec that chooses the moves: inside any ``endgame:`` wrapper."""
        return self if self.inner is None else self.inner.base

    @property
    def checkpoint_path(self) -> str | None:
        """The ``ckpt:`` path this agent plays (also inside ``endgame:``), or None."""
        base = self.base
        return base.path if base.kind == "ckpt" else None

    @property
    def carries_weights(self) -> bool:
        """Whether the agent plays a checkpoint's weights (``ckpt:``, ``pretrained``):
        a weights hash, not the spec alone, says which agent it is."""
        return _table()[self.base.kind].weights

    @property
    def plays_network_alone(self) -> bool:
        """Whether the agent is a network's policy and nothing else (``ckpt:``,
        ``pretrained``; not ``expert``, which searches, nor anything inside
        ``endgame:``): what a batched rollout can play."""
        return self.inner is None and _table()[self.kind].network

    def build(self, env_name: str, seed: int | None = None, **context: Any) -> Agent:
        """The agent for the env ``env_name`` (`parlour.agents.make`'s ``context``)."""
        kind = kind_for(self.kind, env_name)
        return kind.build(self, env_name, seed, context)


@dataclass(frozen=True)
class Kind:
    """One agent kind: a row of the table."""

    word: str
    argument: str
    forms: tuple[str, ...]
    """how ``parlour list`` shows it"""
    build: Callable[[AgentSpec, str, int | None, Mapping[str, Any]], Agent]
    accepts: Callable[[str], bool]
    """whether an env has it (``parlour list``; a game's own kinds are refused for
    other envs when the spec is read)"""
    weights: bool = False
    """it plays a checkpoint's weights"""
    network: bool = False
    """it plays those weights alone, with no search (a batched rollout can play it)"""
    ray: bool = True
    """a Ray worker can play it (it is rebuilt there from its spec; ``ckpt:`` from the
    weights the driver ships)"""
    samples: bool = False
    """it takes ``@sample`` (and ``@sym``, ``@plain``: it plays a policy)"""
    game_kind: bool = False
    """declared by game records (`parlour.envs.GameRecord.extra_kinds`)"""
    names: tuple[str, ...] = ()
    """the names a `NAME` argument may take (empty: any, and it may be left out)"""
    usage: str = ""
    """the one-line hint for a bad argument"""

    def read(self, arg: str, env_name: str | None) -> dict[str, Any]:
        """The `AgentSpec` fields of an argument; one-line ValueError if malformed."""
        if self.argument == NONE:
            if arg:
                raise ValueError(
                    f"the {self.word} agent takes no options, got {self.word}:{arg}"
                )
            return {}
        if self.argument == SWITCHES:
            return {"switches": tuple(parse_switches(arg).items())}
        if self.argument == NUMBER:
            try:
                return {"n": int(arg)}
            except ValueError:
                raise ValueError(
                    f"write {self.word}:N with N a whole number, got {arg!r}"
                ) from None
        if self.argument == SPEC:
            if not arg:
                raise ValueError(self.usage)
            return {"inner": AgentSpec.parse(arg, env_name)}
        if self.argument == PATH:
            if not arg:
                raise ValueError(self.usage)
            return {"path": arg}
        if self.names and arg not in self.names:
            raise ValueError(self.usage)
        return {"name": arg}


def policy_suffix(suit_average: bool | None, sample: bool) -> str:
    """How a policy's play is written after its spec: ``@sym`` / ``@plain`` where the
    suit average is asked for or refused, then ``@sample`` where it samples."""
    return ("" if suit_average is None else SUIT_SUFFIX[suit_average]) + (
        SAMPLE if sample else ""
    )


def _suffixes(text: str) -> tuple[str, list[str]]:
    """``text`` without its policy suffixes (``@sample``, ``@sym``, ``@plain``, in
    any order), and those suffixes."""
    found: list[str] = []
    known = (SAMPLE, *SUIT_SUFFIX.values())
    while stripped := next((s for s in known if text.endswith(s)), None):
        text = text.removesuffix(stripped)
        found.append(stripped)
    return text, found


def parse_switches(text: str) -> dict[str, bool]:
    """``"-win_cheaply,+save_trumps"`` ->
    ``{"win_cheaply": False, "save_trumps": True}``."""
    out: dict[str, bool] = {}
    for token in filter(None, (t.strip() for t in text.split(","))):
        if token[0] not in "+-" or len(token) < 2:
            raise ValueError(
                f"bad switch {token!r}: write +name to turn an option on "
                "or -name to turn it off"
            )
        out[token[1:]] = token[0] == "+"
    return out


_ARGUMENT_TEXT: dict[str, Callable[[AgentSpec], str]] = {
    NONE: lambda s: "",
    SWITCHES: lambda s: (
        ":" + ",".join(("+" if on else "-") + n for n, on in s.switches)
        if s.switches
        else ""
    ),
    NUMBER: lambda s: f":{s.n}",
    SPEC: lambda s: f":{s.inner}",
    PATH: lambda s: f":{s.path}",
    NAME: lambda s: f":{s.name}" if s.name else "",
}


# --- building -------------------------------------------------------------------------
def _random(spec: AgentSpec, env_name: str, seed, context) -> Agent:
    from .base import RandomAgent

    return RandomAgent(seed)


def _heuristic(spec: AgentSpec, env_name: str, seed, context) -> Agent:
    from . import heuristic_class

    return heuristic_class(env_name)(seed=seed, **dict(spec.switches))


def _checkpoint(spec: AgentSpec, env_name: str, seed, context) -> Agent:
    from .checkpoint import CheckpointAgent

    return CheckpointAgent(
        spec.path,
        env_name,
        context.get("env_options"),
        seed=seed,
        deterministic=not spec.sample,
        # a Ray worker gets the weights, not the file (parlour.training.distributed)
        shipped=(context.get("checkpoints") or {}).get(spec.path),
        suit_average=spec.suit_average,
    )


def _pretrained(spec: AgentSpec, env_name: str, seed, context) -> Agent:
    from ..training import pretrained

    return pretrained.agent(
        env_name,
        context.get("env_options"),
        seed=seed,
        deterministic=not spec.sample,
        name=spec.name or None,
        suit_average=spec.suit_average,
    )


def _expert(spec: AgentSpec, env_name: str, seed, context) -> Agent:
    from .expert import build

    return build(env_name, context.get("env_options"), seed)


def _has_expert(env_name: str) -> bool:
    return bool(envs.record(env_name).expert) and _has_pretrained(env_name)


def _endgame(spec: AgentSpec, env_name: str, seed, context) -> Agent:
    from . import exact_moves
    from .base import EndgameAgent

    assert spec.inner is not None
    return EndgameAgent(
        spec.inner.build(env_name, seed, **context), exact_moves(env_name)
    )


def _text(spec: AgentSpec, env_name: str, seed, context) -> Agent:
    # Text play (parlour.text): only the scripted test player has a spec; a language
    # model is wrapped in code with parlour.text.TextAgent(ask).
    from ..text import scripted_agent

    return scripted_agent(seed)


def _game_kind(spec: AgentSpec, env_name: str, seed, context) -> Agent:
    from . import _load

    arg = "" if spec.n is None else str(spec.n)
    return _load(envs.record(env_name).extra_agents)(spec.kind, arg, seed)


def _has(field: str) -> Callable[[str], bool]:
    return lambda env_name: bool(getattr(envs.record(env_name), field))


def _has_pretrained(env_name: str) -> bool:
    from ..training import pretrained

    return bool(pretrained.models_of(env_name))


def _every_env(env_name: str) -> bool:
    return True


_BUILT_IN_HEAD = (
    Kind("random", NONE, ("random",), _random, _every_env),
    Kind(
        "heuristic",
        SWITCHES,
        ("heuristic", "heuristic:-tip,+tip"),
        _heuristic,
        _has("heuristic"),
    ),
)
_BUILT_IN_TAIL = (
    Kind(
        "endgame",
        SPEC,
        ("endgame:SPEC",),
        _endgame,
        _has("exact_moves"),
        usage="write endgame:SPEC, e.g. endgame:ckpt:PATH (SPEC corrected by the "
        "exact solver where it can value the position)",
    ),
    Kind(
        "pretrained",
        NAME,
        ("pretrained",),
        _pretrained,
        _has_pretrained,
        weights=True,
        network=True,
        samples=True,
    ),
    Kind("expert", NONE, ("expert",), _expert, _has_expert, weights=True),
    Kind(
        "ckpt",
        PATH,
        ("ckpt:PATH",),
        _checkpoint,
        _every_env,
        weights=True,
        network=True,
        samples=True,
        usage="write ckpt:PATH (a checkpoint or run directory)",
    ),
    Kind(
        "text",
        NAME,
        ("text:scripted",),
        _text,
        _every_env,
        names=("scripted",),
        usage="write text:scripted (the scripted text player); wrap a language "
        "model with parlour.text.TextAgent(ask) in code",
    ),
)


@functools.cache
def _table() -> dict[str, Kind]:
    """Built on first use: the game records' kinds are read from the records."""
    table = {k.word: k for k in _BUILT_IN_HEAD}
    for record in envs.records():
        for form in record.extra_kinds:
            word, _, argument = form.partition(":")
            if argument not in ("", "N"):
                raise ValueError(
                    f"{record.name}: agent kind {form!r} must be KIND or KIND:N"
                )
            if word in table:
                if table[word].forms != (form,):
                    raise ValueError(
                        f"{record.name}: agent kind {form!r} clashes with "
                        f"{table[word].forms[0]!r}"
                    )
                continue
            table[word] = Kind(
                word,
                NUMBER if argument else NONE,
                (form,),
                _game_kind,
                lambda env_name, form=form: form in envs.record(env_name).extra_kinds,
                game_kind=True,
            )
    for kind in _BUILT_IN_TAIL:
        if kind.word in table:
            raise ValueError(f"a game's agent kind {kind.word!r} is Parlour's own")
        table[kind.word] = kind
    return table


def kinds() -> dict[str, Kind]:
    """The table of agent kinds (word -> `Kind`): the built-in ones and the game
    records' own, in the order ``parlour list`` shows them."""
    return dict(_table())


def forms(env_name: str) -> list[str]:
    """Every agent spec form the env accepts (``parlour list``)."""
    return [f for k in _table().values() if k.accepts(env_name) for f in k.forms]


def kind_for(word: str, env_name: str | None = None) -> Kind:
    """The kind of a spec's first word; one-line ValueError naming the kinds (the
    env's, when ``env_name`` is given) for an unknown one."""
    kind = _table().get(word)
    if env_name is not None and env_name in envs.names():
        if kind is None or (kind.game_kind and not kind.accepts(env_name)):
            raise ValueError(
                f"unknown agent kind {word!r} for {env_name}; use "
                f"{', '.join(forms(env_name))}"
            )
    elif kind is None:
        every = [f for k in _table().values() for f in k.forms]
        raise ValueError(f"unknown agent kind {word!r}; use {', '.join(every)}")
    return kind


def checkpoint_path(text: str) -> str | None:
    """The ``ckpt:`` path of a spec (also inside ``endgame:``), or None, also for a
    malformed spec or an agent's name that is no spec (building the agent says what
    is wrong with a spec)."""
    try:
        return AgentSpec.parse(text).checkpoint_path
    except ValueError:
        return None


def ray_playable(text: str | AgentSpec) -> bool:
    """Whether a Ray worker can play the agent (every kind in it can)."""
    spec: AgentSpec | None = parse(text)
    while spec is not None:
        if not _table()[spec.kind].ray:
            return False
        spec = spec.inner
    return True


def parse(text: str | AgentSpec, env_name: str | None = None) -> AgentSpec:
    """``text`` parsed (`AgentSpec.parse`); an `AgentSpec` as it is."""
    if isinstance(text, AgentSpec):
        return text
    return AgentSpec.parse(text, env_name)


__all__ = [
    "AgentSpec",
    "Kind",
    "checkpoint_path",
    "forms",
    "kind_for",
    "kinds",
    "parse",
    "parse_switches",
    "ray_playable",
]
