"""Exact solvers and search bots for the trick-taking games (issue 9).

* `parlour.agents.solver.german_whist`: the double-dummy stage-2 solver for German Whist
  and Honeymoon Whist, the ``solver`` and ``pimc:N`` bots, and `stage2_quality`.
* `parlour.agents.solver.tricks`: the paranoid alpha-beta search (`TrickSolver`), the
  knowledge-consistent deal sampler and the PIMC bot shared by the next three.
* `parlour.agents.solver.forty_fives`, `parlour.agents.solver.fuenfzehnern`,
  `parlour.agents.solver.herzeln`: each game's rules for the search, what a seat knows,
  and its ``solver`` / ``pimc:N`` bots; `parlour.agents.solver.forty_fives_jit` and
  `parlour.agents.solver.fuenfzehnern_jit` the same searches compiled with numba, the
  backend picked in `parlour.agents.solver.backend`.

``docs/solvers.md`` describes the algorithms, their speed and their known weaknesses.
"""
