"""The German Whist / Honeymoon Whist heuristic bot, and what the tips say about play.

* `heuristic`: `GermanWhistHeuristic`, the rule-based bot whose options are the seed's
  strategy tips (`TIPS`), and its stage-1 value model;
* `stage2`: its stage-2 play (counting, and the exact search of the last tricks);
* `table`: what it reads about a game (`Table`) and the pack's trick order (`Ranks`);
* `tip_situations`: for a decision in a position, what each tip prescribes and whether
  the card follows it (the strategy-tips harness's agent agreement).

The exact stage-2 solver and the PIMC bots are `parlour.agents.solver.german_whist`.
"""

from __future__ import annotations

from .heuristic import TIPS, GermanWhistHeuristic

__all__ = ["TIPS", "GermanWhistHeuristic"]
