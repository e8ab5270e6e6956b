"""TLS and name resolution so an unmodified client reaches the fake at Discord's real URLs.

The fake serves HTTPS with a certificate for discord.com, discord.gg, discordapp.com/net and their
subdomains, issued by a CA that ``trustme`` creates in memory when the first fake starts (once per test
process). Nothing secret is committed: the CA and the leaf key exist only in the test process.
``make_connector`` returns an aiohttp connector whose resolver maps exactly those names to the fake's
loopback port and refuses every other name, and whose socket factory refuses any non-loopback address, so
nothing can leak off the machine.
"""

from __future__ import annotations

import functools
import socket
import ssl

import aiohttp
import trustme
from aiohttp.abc import AbstractResolver, ResolveResult

FAKE_DOMAINS = ("discord.com", "discord.gg", "discordapp.com", "discordapp.net")
LOOPBACK = "127.0.0.1"


@functools.cache
def _authority() -> tuple[trustme.CA, trustme.LeafCert]:
    """The test CA and the fake's leaf certificate, made once per process (never written to the tree)."""
    ca = trustme.CA(organization_name="thousand fake Discord test CA")
    names = [name for domain in FAKE_DOMAINS for name in (domain, f"*.{domain}")]
    return ca, ca.issue_cert(*names, common_name="discord.com")


def server_ssl_context() -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    _authority()[1].configure_cert(ctx)
    return ctx


def client_ssl_context() -> ssl.SSLContext:
    """Trusts only the fake's test CA: a request that somehow reached a real host would fail TLS."""
    # With cadata given, the system's CAs are not loaded.
    return ssl.create_default_context(cadata=_authority()[0].cert_pem.bytes().decode())


def is_fake_host(host: str) -> bool:
    host = host.rstrip(".").lower()
    return any(host == d or host.endswith("." + d) for d in FAKE_DOMAINS)


class FakeDiscordResolver(AbstractResolver):
    """Resolves Discord's host names to the fake and refuses everything else."""

    def __init__(self, port: int) -> None:
        self.port = port

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        if not is_fake_host(host):
            raise OSError(f"fake Discord resolver refuses to resolve {host!r} (loopback-only tests)")
        return [
            ResolveResult(
                hostname=host,
                host=LOOPBACK,
                port=self.port,
                family=socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
        ]

    async def close(self) -> None:
        return None


def _loopback_only_socket(addr_info: tuple[object, ...]) -> socket.socket:
    family, type_, proto, _canon, sockaddr = addr_info
    assert isinstance(sockaddr, tuple)
    if not str(sockaddr[0]).startswith("127."):
        raise OSError(f"fake Discord connector refuses non-loopback address {sockaddr[0]}")
    return socket.socket(family, type_, proto)  # type: ignore[arg-type]


def make_connector(port: int) -> aiohttp.TCPConnector:
    """A fresh connector for one client session (a closed session closes its connector)."""
    return aiohttp.TCPConnector(
        limit=0,
        resolver=FakeDiscordResolver(port),
        ssl=client_ssl_context(),
        socket_factory=_loopback_only_socket,
    )
