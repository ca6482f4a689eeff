"""An agent's identity in the league: its spec, plus the SHA-256 of its weights when
it plays a checkpoint.

A run directory's latest checkpoint changes as training goes on, and the shipped
``pretrained`` model changes between versions of Parlour, so a spec alone does not say
which agent played; the weights hash does. The league names such an agent
``SPEC#HASH12`` (`agent_name`) and stores the full hash with each game. A checkpoint
that plays its policy averaged over the suit renamings (``@sym``, or its manifest's
``suit_average``) is another player than the same weights alone, so its hash is that of
the weights hash and the rule (`player_hash`): the same weights never give one name to
two ways of playing. ``expert`` plays that network with a search whose budget (samples,
hand-size limit, margin) a version of Parlour may change, so its hash is that of the
network's hash and the search's settings (`expert_hash`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from ..agents.base import Agent
from ..agents.spec import AgentSpec, parse


def checkpoint_hash(
    spec: str | AgentSpec,
    env_name: str | None = None,
    env_options: Mapping[str, Any] | None = None,
    agent: Agent | None = None,
) -> str | None:
    """The weights SHA-256 of a spec's checkpoint (``ckpt:PATH``, also inside
    ``endgame:``; ``pretrained`` and ``expert`` too when ``env_name`` is given: the
    shipped model for ``env_options`` or the one named, which changes between
    versions of Parlour), or None for an agent without one. For ``expert`` it is
    `expert_hash` of that and the search's settings, read from ``agent`` (the built
    expert) or from one built here."""
    from ..training import checkpoint as ckpt_io

    base = parse(spec).base
    if not base.carries_weights:
        return None
    if base.kind == "ckpt":
        manifest = ckpt_io.resolve(base.path) / ckpt_io.MANIFEST
        found = json.loads(manifest.read_text())
    elif base.kind in ("pretrained", "expert") and env_name is not None:
        # ``expert`` searches over the shipped network of ``pretrained``
        from ..training import pretrained

        found = pretrained.manifest(env_name, env_options, base.name or None)
    else:
        return None
    averaged = base.suit_average
    if averaged is None:
        averaged = ckpt_io.suit_average_of(found)
    digest = player_hash(str(found["weights_sha256"]), averaged)
    if base.kind != "expert":
        return digest
    if agent is None:
        from .. import agents

        agent = agents.make(spec, env_name, seed=0, env_options=dict(env_options or {}))
    return expert_hash(digest, agent.search_settings())


def expert_hash(network_hash: str, settings: Mapping[str, Any]) -> str:
    """The league's hash of an ``expert``: the SHA-256 of its network's hash and its
    search's settings, so the same network searched with another budget is another
    player."""
    text = json.dumps(dict(settings), sort_keys=True)
    return hashlib.sha256(f"{network_hash}+expert{text}".encode()).hexdigest()


def player_hash(weights_sha256: str, suit_average: bool) -> str:
    """The league's hash of a checkpoint player: its weights hash, or for the policy
    averaged over the suit renamings the SHA-256 of that hash and the rule."""
    if not suit_average:
        return weights_sha256
    return hashlib.sha256(f"{weights_sha256}+suit_average".encode()).hexdigest()


def agent_name(spec: str, digest: str | None) -> str:
    """An agent's name in the league: its spec, plus the checkpoint hash if it has one
    (a run directory's latest checkpoint changes as training goes on)."""
    return spec if digest is None else f"{spec}#{digest[:12]}"


def identify(
    spec: str, env_name: str, env_options: Mapping[str, Any] | None = None
) -> tuple[str, str | None]:
    """An agent's name in the league and its weights hash (None without weights). The
    agent is built once, which checks the spec, and named by its canonical spec."""
    from .. import agents

    agent = agents.make(spec, env_name, seed=0, env_options=dict(env_options or {}))
    canonical = agent.spec if isinstance(agent.spec, str) else spec
    digest = checkpoint_hash(spec, env_name, env_options, agent)
    return agent_name(canonical, digest), digest
