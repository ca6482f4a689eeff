"""The training backends' interface (`parlour.training.backends`): what a new backend
must implement, checked against the one that exists."""

from __future__ import annotations

import importlib
import inspect

import pytest

from parlour.training import backends
from parlour.training.train import config_from_dict, train


def _members(cls: type) -> dict[str, object]:
    return {
        name: value
        for name, value in vars(cls).items()
        if not name.startswith("_") and (callable(value) or isinstance(value, property))
    }


@pytest.mark.parametrize("name", sorted(backends.BACKENDS))
def test_backend_implements_every_method_of_the_protocol(name: str):
    """Every registered backend (sb3, batch, rllib) has the protocol's methods with its
    signatures."""
    module, _, cls = backends.BACKENDS[name].partition(":")
    backend = getattr(importlib.import_module(module), cls)
    wanted = _members(backends.Backend)
    assert {"collect", "update", "export_weights", "restore", "steps"} <= set(wanted)
    for name, member in wanted.items():
        have = getattr(backend, name, None)
        assert have is not None, f"{backend.__name__} lacks {name}"
        if isinstance(member, property):
            assert isinstance(have, property), name
            continue
        assert list(inspect.signature(have).parameters) == list(
            inspect.signature(member).parameters
        ), name
    for attribute in ("method", "game", "rollout_steps"):
        assert attribute in backends.Backend.__annotations__


def test_every_listed_backend_loads():
    for name in backends.names():
        module, _, cls = backends.BACKENDS[name].partition(":")
        assert inspect.isclass(getattr(__import__(module, fromlist=[cls]), cls))


def test_unknown_backend_is_refused_before_anything_is_written(tmp_path):
    config = config_from_dict({"total_timesteps": 2048})
    with pytest.raises(ValueError, match=r"unknown backend 'nope' \(backends: .*sb3"):
        train(config, run_dir=tmp_path / "run", backend="nope", progress=False)
    assert not (tmp_path / "run").exists()
