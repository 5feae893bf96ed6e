"""The relay needs only the protocol's framing and witness: loading it loads no rules and no match protocol."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


@pytest.mark.net
def test_the_relay_loads_only_the_framing_and_the_witness() -> None:
    code = (
        "import sys, json; import koikoi.relay.server, koikoi.relay.client; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('koikoi'))))"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    loaded = set(json.loads(p.stdout))
    assert "koikoi.protocol.framing" in loaded
    assert not {m for m in loaded if m.startswith(("koikoi.engine", "koikoi.client"))}
    # the framing names its failures with the protocol's codes: pure data, importing nothing
    assert {m for m in loaded if m.startswith("koikoi.protocol.")} == {
        "koikoi.protocol.codes",
        "koikoi.protocol.framing",
        "koikoi.protocol.witness",
    }
