"""The ``created`` reply says whether the relay keeps a public archive, so the host is told before anyone joins
(``koikoi host`` says what the archive will do with the room's match), as ``rooms``, ``room`` tell a joiner."""

from __future__ import annotations

import pytest

from koikoi.relay.client import RelayClient, connect
from koikoi.relay.server import Archive, RelayConfig, open_relay


def said(client: RelayClient) -> bool | None:
    return client.archive


@pytest.mark.parametrize("archive", [True, False])
async def test_a_creator_is_told_whether_the_relay_keeps_an_archive(archive: bool) -> None:
    kept: list[Archive] = []
    hook = kept.append if archive else None
    async with open_relay(RelayConfig(port=0, archive=archive), on_archive=hook) as relay:
        async with connect(relay.url) as client:
            assert said(client) is None  # not asked yet
            await client.create_room(deck="sealed")
            assert said(client) is archive
            info = await client.room_info(client.ticket.room if client.ticket else "")
            assert info.archive is archive
