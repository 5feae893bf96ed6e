"""Timers and knobs of networked play, from the environment (seconds).

The move time itself is a room setting (``koikoi host --move-time``), bound in both HELLOs.
``KOIKOI_TIMEOUT_WARNING`` (30: a warning this long before a player's time runs out),
``KOIKOI_RECONNECT_TIMEOUT`` (180: how long to keep trying to reach
the relay again), ``KOIKOI_CONNECT_TIMEOUT`` (10), ``KOIKOI_BOT_DELAY`` (0: a pause before each bot
move, to watch a bot match), ``KOIKOI_LINGER`` (10: how long an embedded relay waits for the opponent
to finish after the host's match ended).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

from ..protocol.session import TimeoutPolicy
from .output import NetError

__all__ = ["Tuning"]


def _env_seconds(name: str, default: float) -> float:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        x = float(text)
    except ValueError:
        raise NetError("usage", f"{name} must be a number of seconds, not {text!r}") from None
    if not x >= 0 or math.isinf(x):
        raise NetError("usage", f"{name} must be 0 or more seconds, not {text!r}")
    return x


@dataclass(frozen=True, slots=True)
class Tuning:
    """Timers and knobs (from the environment; see the module docstring)."""

    timeouts: TimeoutPolicy = field(default_factory=TimeoutPolicy)
    reconnect_s: float = 180.0
    connect_s: float = 10.0
    bot_delay: float = 0.0
    linger_s: float = 10.0

    @classmethod
    def from_env(cls) -> Tuning:
        t = TimeoutPolicy(warning=_env_seconds("KOIKOI_TIMEOUT_WARNING", TimeoutPolicy().warning))
        return cls(
            t,
            reconnect_s=_env_seconds("KOIKOI_RECONNECT_TIMEOUT", 180.0),
            connect_s=max(0.1, _env_seconds("KOIKOI_CONNECT_TIMEOUT", 10.0)),
            bot_delay=_env_seconds("KOIKOI_BOT_DELAY", 0.0),
            linger_s=_env_seconds("KOIKOI_LINGER", 10.0),
        )
