"""The shipped YAML configs, package data of ``parlour.configs``.

``ENV.yaml`` is the default training config of an env, ``ENV.NAME.yaml`` its named
presets (``parlour train ENV --preset NAME``) and ``tips/ENV.yaml`` the pre-registered
strategy-tip hypotheses (``parlour tips``). This folder is the one place they are
edited; the wheel installs it as ``parlour/configs/``, read with `importlib.resources`.
"""
