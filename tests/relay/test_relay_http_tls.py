"""``wss://`` to a server without TLS says so, at once when it is a koikoi relay (it answers a TLS handshake in
plain text), after the connect timeout when the server stays silent, instead of "cannot reach the relay … (is
it running?)"; ``wss://`` through a real TLS proxy still plays, and a certificate for another name is named."""

from __future__ import annotations

import datetime
import io
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path

import pytest
import trio
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from koikoi.client.output import relay_error_text
from koikoi.relay.client import RelayError, connect
from koikoi.relay.observe import EventLog
from koikoi.relay.server import RelayConfig, open_relay


async def test_wss_to_a_relay_without_tls_says_so_at_once() -> None:
    buf = io.StringIO()
    async with open_relay(RelayConfig(port=0, handshake_timeout=600), log=EventLog(buf)) as relay:
        url = f"wss://127.0.0.1:{relay.port}"
        with trio.fail_after(60), pytest.raises(RelayError) as e:  # (not the relay's 600 s handshake timeout)
            async with connect(url, timeout=600):
                pass
    err = e.value
    assert err.code == "relay_unreachable" and err.extra == {"tls": True}
    assert err.message == (
        f"{url} does not speak TLS (TLS failed: wrong version number): a relay without TLS is "
        f"ws://127.0.0.1:{relay.port}; wss:// needs TLS in front of it (see the README)"
    )
    assert relay_error_text(err, url) == ("relay_unreachable", err.message)
    assert [line for line in buf.getvalue().splitlines() if "limit_hit" in line] == []


async def test_wss_to_a_silent_server_names_the_tls_handshake() -> None:
    async def silent(stream: trio.SocketStream) -> None:
        await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, silent, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        with pytest.raises(RelayError) as e:
            async with connect(f"wss://127.0.0.1:{port}", timeout=0.5):
                pass
        nursery.cancel_scope.cancel()
    assert e.value.message.startswith(f"wss://127.0.0.1:{port} does not speak TLS (no TLS answer within 0.5 s)")
    # a refused TCP connection is still "cannot reach" (the port is closed now)
    with pytest.raises(RelayError) as e:
        async with connect(f"wss://127.0.0.1:{port}", timeout=5):
            pass
    assert e.value.code == "relay_unreachable" and "tls" not in e.value.extra
    assert (
        relay_error_text(e.value, "wss://x")[1]
        == "cannot reach the relay at wss://x (is it running? is the address right?)"
    )


def _certificate(tmp: Path, name: str) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp / f"{name}.pem", tmp / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


@asynccontextmanager
async def tls_proxy(relay_port: int, cert: Path, key: Path) -> AsyncIterator[int]:
    """TLS in front of the relay (as Caddy or nginx would be): its port on 127.0.0.1."""
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)

    async def pipe(src: trio.abc.Stream, dst: trio.abc.Stream) -> None:
        try:
            while data := await src.receive_some(65536):
                await dst.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        finally:
            await trio.aclose_forcefully(dst)

    async def handle(tcp: trio.SocketStream) -> None:
        front = trio.SSLStream(tcp, ctx, server_side=True)
        back = await trio.open_tcp_stream("127.0.0.1", relay_port)
        async with trio.open_nursery() as n:
            n.start_soon(pipe, front, back)
            n.start_soon(pipe, back, front)

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, handle, 0, host="127.0.0.1"))
        yield listeners[0].socket.getsockname()[1]
        nursery.cancel_scope.cancel()


async def test_wss_through_tls_plays_and_a_wrong_certificate_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = _certificate(tmp_path, "localhost")
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # (ssl.create_default_context trusts it)
    async with open_relay(RelayConfig(port=0, chosen_codes_after_s=0), log=EventLog(enabled=False)) as relay:
        async with tls_proxy(relay.port, cert, key) as port:
            with trio.fail_after(30):
                async with connect(f"wss://localhost:{port}", timeout=10) as client:
                    ticket = await client.create_room()
                    assert client.relay_fingerprint == relay.fingerprint
            assert ticket.room in relay.rooms
            with trio.fail_after(30), pytest.raises(RelayError) as e:
                async with connect(f"wss://127.0.0.1:{port}", timeout=10):  # (the certificate names localhost)
                    pass
    assert e.value.code == "relay_unreachable" and e.value.extra == {"tls": True}
    assert e.value.message.startswith(
        f"cannot reach the relay at wss://127.0.0.1:{port}: its TLS certificate is not valid ("
    ), e.value.message
