"""Ready-made connections between Parlour's envs and the libraries researchers use.

Parlour's envs are plain PettingZoo AEC envs that pass PettingZoo's own checks, so
most tools take them directly; the modules here build the wrapped env (and the odd piece
a library still lacks) so that one import gives a working setup. Each module needs its
library, installed by the optional extra of the same name (``pip install
"parlour[torchrl]"``, ``[tianshou]``, ``[rllib]``, ``[openspiel]``), and is imported by
name, so ``import parlour`` never needs it. ``docs/integrations.md`` has a runnable
example per library and says which ``illegal_action`` mode each needs.

- `parlour.integrations.torchrl`: TorchRL's ``PettingZooWrapper`` with the mask on.
- `parlour.integrations.tianshou`: Tianshou's ``PettingZooEnv``, vectorised, and a
  masked random policy for every seat.
- `parlour.integrations.rllib`: RLlib multi-agent envs (registered as
  ``parlour/<env>``) and a masked PPO RLModule.
- `parlour.integrations.openspiel`: every game as a pyspiel game (``parlour_<game>``).
"""
