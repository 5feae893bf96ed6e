"""koikoi.protocol: the match protocol, sans-IO (see spec/protocol.md).

* :mod:`.framing` - canonical msgpack frames (all the relay needs);
* :mod:`.messages` - signed positional envelopes, labelled derivations, fingerprints;
* :mod:`.referee` - verifies a match's line of messages for either seat;
* :mod:`.session` - one player's side: bytes and decisions in, frames, records and events out;
* :mod:`.transcript` and :mod:`.audit` - the transcript format and the auditor;
* :mod:`.harness` - two sessions wired in memory, bots on both seats (tests, the client's tests).
"""
