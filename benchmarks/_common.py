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
