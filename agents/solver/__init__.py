"""Exact solvers and search bots for the trick-taking games (issue 9).

* `parlour.agents.solver.german_whist`: the double-dummy stage-2 solver for German Whist
  and Honeymoon Whist, the ``solver`` and ``pimc:N`` bots, and `stage2_quality`.

``docs/solvers.md`` describes the algorithms, their speed and their known weaknesses.
"""
