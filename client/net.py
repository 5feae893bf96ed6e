"""Networked play: one seat of a match through a relay (``koikoi host``, ``join``, ``resume``).

The pieces live in their own modules; this one gathers their public names for the commands:

* :mod:`~koikoi.client.link` — the relay link (kept up, typed events into the match's inbox);
* :mod:`~koikoi.client.seats` — seat files and their locks (what ``koikoi resume`` takes back);
* :mod:`~koikoi.client.output` — text for people or one JSON event per line, errors in words;
* :mod:`~koikoi.client.match_loop` — the match loop (:class:`NetGame`);
* :mod:`~koikoi.client.tuning` — timers and knobs from the environment;
* :mod:`~koikoi.client.embedded` — the relay ``koikoi host`` runs itself;
* :mod:`~koikoi.client.netsetup` — options, key, transcript paths, the session rebuilt for resume.

``KOIKOI_DEBUG_NET=1`` traces the link and the match loop on stderr.
"""

from __future__ import annotations

from .embedded import DEFAULT_LISTEN, embedded_relay, linger, parse_listen, public_url
from .link import RETRY, Link, resume_seat
from .match_loop import NetGame
from .netsetup import (
    DEFAULT_RELAY,
    add_player_arguments,
    bot_spec_arg,
    check_new_transcript,
    load_key,
    look_options,
    new_transcript_path,
    relay_from_config,
    replay_session,
)
from .output import NetError, Output, find_error, relay_error_text, reported, settings_json, settings_text
from .seats import SeatState, find_seat_state, seat_in_use, seats_dir
from .tuning import Tuning

__all__ = [
    "DEFAULT_LISTEN",
    "DEFAULT_RELAY",
    "RETRY",
    "Link",
    "NetError",
    "NetGame",
    "Output",
    "SeatState",
    "Tuning",
    "add_player_arguments",
    "bot_spec_arg",
    "check_new_transcript",
    "embedded_relay",
    "find_error",
    "find_seat_state",
    "linger",
    "load_key",
    "look_options",
    "new_transcript_path",
    "parse_listen",
    "public_url",
    "relay_error_text",
    "relay_from_config",
    "replay_session",
    "reported",
    "resume_seat",
    "seat_in_use",
    "seats_dir",
    "settings_json",
    "settings_text",
]
