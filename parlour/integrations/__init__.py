"""Adapters from Parlour's games to other libraries' APIs.

Each adapter is a module of its own behind an optional extra, imported by name so that
``import parlour`` never needs the library it adapts:

* `parlour.integrations.rllib` (extra ``rllib``): RLlib multi-agent envs and a masked
  PPO module.
* `parlour.integrations.openspiel` (extra ``openspiel``): every game as a pyspiel game.

``docs/integrations.md`` has one runnable example per library.
"""
