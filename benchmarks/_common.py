"""What several benchmark scripts share (imported as ``_common``: a script's folder is
on ``sys.path`` when Python runs it)."""

from __future__ import annotations

from typing import Any


def config_summary(config: Any) -> dict[str, Any]:
    """The training-config fields that set a training benchmark's speed, for its
    report row."""
    return {
        "n_envs": config.n_envs,
        "n_steps": config.n_steps,
        "net_arch": list(config.net_arch),
        "n_epochs": config.n_epochs,
        "batch_size": config.batch_size,
        "opponents": dict(config.opponents),
    }


def fuenfzehnern_backend() -> str:
    """The Fünfzehnern search's backend (``PARLOUR_JIT``), its compiled code loaded
    now rather than in the first timed solve."""
    from parlour.agents.solver import fuenfzehnern as fz
    from parlour.envs.fuenfzehnern.rules import Fuenfzehnern

    backend = fz.FuenfzehnernSolver(Fuenfzehnern(), [0] * 4, 0).backend
    if backend == "numba":
        from parlour.agents.solver import fuenfzehnern_jit

        fuenfzehnern_jit.warm_up()
    return backend


def herzeln_backend() -> str:
    """The Herzeln search's backend (``PARLOUR_JIT``), its compiled code loaded now
    rather than in the first timed solve."""
    from parlour.agents.solver import herzeln as hz
    from parlour.envs.herzeln.rules import NO_HEARTS, Herzeln

    if hz.HerzelnSolver(Herzeln(), [0] * 4, 0, NO_HEARTS).backend == "python":
        return "python"
    from parlour.agents.solver import herzeln_jit

    herzeln_jit.warm_up()
    return "numba"
