"""The terminal play experience: the table, the narration, the prompts.

* :mod:`.text`: the :class:`Look` (language, colour, width, assist) and who is
  who in sentences (:class:`Seats`); locale, NO_COLOR and encoding detection.
* :mod:`.render`: pure functions from a :class:`~koikoi.engine.match.SeatView`
  or the engine's log to lines of text (:func:`render_view`, :class:`Narrator`).
* :mod:`.human`: :class:`ActionPrompt` (sans-IO: feed it lines) and
  :class:`HumanPlayer` (``choose(view) -> Action`` on a pair of streams).

A networked client reuses all of it: it renders the same views, narrates its
own copy of the match log, and asks its player through :class:`HumanPlayer`
(in a worker thread) or feeds lines to an :class:`ActionPrompt`.
"""

from .console import Console
from .human import ActionPrompt, HumanPlayer, PlayerQuit, Reply, TextScreen
from .render import (
    Narrator,
    card_list,
    card_name,
    count_lines,
    first_dealer_lines,
    matches_in,
    narrate,
    render_view,
    shobu_breakdown,
    yaku_name,
)
from .text import MIN_WIDTH, Look, Seats, can_encode, detect_lang, display_width, look_for, safe_text, use_color, wrap

__all__ = [
    "MIN_WIDTH",
    "ActionPrompt",
    "Console",
    "HumanPlayer",
    "Look",
    "Narrator",
    "PlayerQuit",
    "Reply",
    "Seats",
    "TextScreen",
    "can_encode",
    "card_list",
    "card_name",
    "count_lines",
    "detect_lang",
    "display_width",
    "first_dealer_lines",
    "look_for",
    "matches_in",
    "narrate",
    "render_view",
    "safe_text",
    "shobu_breakdown",
    "use_color",
    "wrap",
    "yaku_name",
]
