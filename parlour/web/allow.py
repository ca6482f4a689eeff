"""The agents a browser may ask for: an allow-list kept on the server.

A request names an agent by a spec from this list, never by a file path:

- the bot kinds: ``random``, ``heuristic``, ``heuristic:-tip,+tip`` (the bot's own
  switches), the game's other kinds (``solver``, ``pimc:N``, ``optimal``,
  ``threshold:N``; N bounded so one request cannot hold the server for long),
  ``endgame:SPEC`` for a game with an exact solver, and ``text:scripted``;
- ``pretrained`` (``pretrained:NAME`` a shipped model by name; ``@sample`` samples
  from its policy): the game's shipped agent; ``expert``: it with the game's search;
- ``model:NAME`` (and ``model:NAME@sample``): a checkpoint found under a ``--models``
  directory when the server started, NAME being its path below that directory's
  name (``runs/gw`` given, ``gw/seed1`` found).

Specs are read by `parlour.agents.parse`. Anything else (``ckpt:PATH``, ``../``, a
kind the game has not) is refused with `AgentRefused`, a one-line ValueError that the
server answers with a 400 page.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from .. import envs
from ..agents import kinds, parse

#: the largest N of the game's ``kind:N`` agents a request may ask for (PIMC worlds,
#: a dice threshold); a PIMC bot's time per move grows with N
MAX_N = {"pimc": 64, "threshold": 100}
#: characters a spec may hold: no path separators outside a model's name
_SPEC = re.compile(r"^[A-Za-z0-9_:+,@.\-/]{1,120}$")
#: how deep below a --models directory checkpoints are looked for
SCAN_DEPTH = 4


class AgentRefused(ValueError):
    """An agent spec that is not on the server's allow-list."""


def scan_models(dirs: Iterable[str | Path]) -> dict[str, Path]:
    """Checkpoints (directories with a manifest) and run directories (with a latest
    pointer) under each directory, by name: the directory's own name followed by the
    path below it."""
    from ..training import checkpoint as ckpt_io

    found: dict[str, Path] = {}
    for root in dirs:
        root = Path(root)
        if not root.is_dir():
            raise ValueError(f"--models {root}: not a directory")
        root = root.resolve()
        candidates = [root, *sorted(p for p in root.rglob("*") if p.is_dir())]
        for d in candidates:
            if len(d.relative_to(root).parts) > SCAN_DEPTH:
                continue
            if (d / ckpt_io.MANIFEST).is_file() or (d / ckpt_io.LATEST).is_file():
                name = "/".join((root.name, *d.relative_to(root).parts))
                found.setdefault(name, d)
    return found


class AllowList:
    """The agent specs this server plays, with the checkpoints it found at start."""

    def __init__(self, model_dirs: Iterable[str | Path] = ()):
        self.models = scan_models(model_dirs)

    def choices(self, env_name: str) -> list[str]:
        """Examples of every spec form the env accepts here, for the forms' lists."""
        from ..training import pretrained

        record = envs.record(env_name)
        out = ["random"]
        if record.heuristic:
            out.append("heuristic")
        for kind in record.extra_kinds:
            head, _, arg = kind.partition(":")
            out.append(f"{head}:{min(8, MAX_N.get(head, 8))}" if arg else head)
        if pretrained.models_of(env_name):
            out.append("pretrained")
        if kinds()["expert"].accepts(env_name):
            out.append("expert")
        out += [f"model:{name}" for name in self.models]
        return out

    def resolve(self, spec: str, env_name: str) -> str:
        """The spec `parlour.agents.make` builds for a requested one; `AgentRefused`
        when it is not on the list, ValueError when it is malformed."""
        spec = spec.strip()
        if not _SPEC.match(spec):
            raise AgentRefused(
                f"agent {spec[:40]!r} is not on this server's list (letters, digits "
                "and : + , @ . - _ only)"
            )
        envs.record(env_name)
        word, _, arg = spec.partition(":")
        if word == "model":
            name, at, mode = arg.rpartition("@") if "@" in arg else (arg, "", "")
            if name not in self.models or (at and mode != "sample"):
                raise AgentRefused(
                    f"no model {name!r} on this server; models: "
                    f"{', '.join(self.models) or 'none (start with --models DIR)'}"
                )
            return f"ckpt:{self.models[name]}" + ("@sample" if at else "")
        if word == "endgame" and arg:
            # the inner agent is checked (and a model found) on its own
            resolved = f"endgame:{self.resolve(arg, env_name)}"
            parse(resolved, env_name)  # a game without an exact solver refuses it
            return resolved
        if "/" in spec or ".." in spec:
            raise AgentRefused(
                "an agent is named from the server's list, never by a path"
            )
        kind = kinds().get(word)
        if kind is None or not kind.accepts(env_name):
            raise AgentRefused(
                f"agent {spec!r} is not on this server's list for {env_name}; use "
                f"one of: {', '.join(self.choices(env_name))}"
            )
        parsed = parse(spec, env_name)  # a malformed argument: ValueError
        if parsed.checkpoint_path is not None:
            raise AgentRefused(
                "an agent is named from the server's list, never by a path "
                "(checkpoints: model:NAME, listed on the start page)"
            )
        if (
            parsed.kind in MAX_N
            and parsed.n is not None
            and parsed.n > MAX_N[parsed.kind]
        ):
            raise AgentRefused(
                f"{parsed.kind}:N takes N up to {MAX_N[parsed.kind]} here"
            )
        return str(parsed)


__all__ = ["MAX_N", "AgentRefused", "AllowList", "scan_models"]
