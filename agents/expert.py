"""The ``expert`` agent: the game's shipped network with search at play time.

``expert`` is the strongest player Parlour ships for a game. It plays the shipped
model for the env's options (the network of ``pretrained``, `parlour.training.
pretrained`, refused with the same one line where none is shipped) and lets the game's
search decide where it can look further than the network (the game record's
``expert`` hook, `parlour.envs.GameRecord.expert`):

* in the trick games, Perfect Information Monte Carlo with the network as the policy
  it improves on: the network's move unless the sampled deals, each
  solved exactly, value another move higher; the network alone where PIMC does not
  search (bidding, robbing, discards, Herzeln's Domino, hands above the search's size
  limit) and on ties;
* in German and Honeymoon Whist, stage 1 the same way over the exact stage-2 solver,
  and stage 2 exactly;
* in Fünfzehn – tot, the network's move corrected by the exact turn solution.

Each game's samples and hand-size limit keep a decision under 0.1 s on average on the
project's 2-core machine (``docs/solvers.md`` has the times and the results against
``solver``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import envs
from .base import Agent

SPEC = "expert"


def build(
    env_name: str,
    env_options: Mapping[str, Any] | None = None,
    seed: int | None = None,
) -> Agent:
    """The ``expert`` agent of an env for its options; one-line ValueError where no
    model is shipped for them or the game has no expert search."""
    from ..training import pretrained

    record = envs.record(env_name)
    if not record.expert:
        having = sorted(r.name for r in envs.records() if r.expert)
        raise ValueError(
            f"no expert agent for {env_name}; envs that have one: {', '.join(having)}"
        )
    network = pretrained.agent(env_name, env_options, seed=seed)
    game = envs.make(env_name, raw=True, **dict(env_options or {})).game
    agent = record.load("expert")(network, game, seed)
    agent.spec = SPEC
    return agent


__all__ = ["SPEC", "build"]
