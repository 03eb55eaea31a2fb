"""Address patterns of plain ACL (RemoteAddressStrategyFactory): which client IPs a white list
(``globalWhiteRemoteAddresses`` or an account's ``whiteRemoteAddress``) lets in.

Forms: blank = matches nothing; ``*``, ``*.*.*.*`` or ``*:*:*:*:*:*:*:*`` = any address; one
address (IPv4 or IPv6, compared in canonical form); a comma list of addresses;
``192.168.1.{1,2,3}`` (the last part in braces); ranges per part, ``192.168.*.*`` or
``192.168.1.1-100`` (IPv6: hex parts, ``1050::5:600:300c:*``). Ranges are matched part by part.
A pattern that does not parse raises ConfigError naming it.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Protocol

from rocketq.errors import ConfigError

ANY_ADDRESS_PATTERNS = frozenset({"*", "*.*.*.*", "*:*:*:*:*:*:*:*"})
IPV4_PARTS = 4
IPV6_PARTS = 8


class RemoteAddressStrategy(Protocol):
    def match(self, ip: str) -> bool: ...


def canonical_ip(text: str) -> str | None:
    """The address in one spelling (IPv6 exploded, upper case), or None if it is not one."""
    try:
        addr = ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            return str(addr.ipv4_mapped)
        return addr.exploded.upper()
    return str(addr)


@dataclass(frozen=True, slots=True)
class BlankRemoteAddressStrategy:
    def match(self, ip: str) -> bool:
        return False


@dataclass(frozen=True, slots=True)
class NullRemoteAddressStrategy:
    def match(self, ip: str) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class MultipleRemoteAddressStrategy:
    addresses: frozenset[str]

    def match(self, ip: str) -> bool:
        return canonical_ip(ip) in self.addresses


@dataclass(frozen=True, slots=True)
class RangeRemoteAddressStrategy:
    """One (low, high) bound per address part; IPv4 or IPv6 by ``ipv6``."""

    bounds: tuple[tuple[int, int], ...]
    ipv6: bool

    def match(self, ip: str) -> bool:
        canonical = canonical_ip(ip)
        if canonical is None or (":" in canonical) != self.ipv6:
            return False
        base = 16 if self.ipv6 else 10
        parts = [int(p, base) for p in canonical.split(":" if self.ipv6 else ".")]
        return all(lo <= part <= hi for part, (lo, hi) in zip(parts, self.bounds, strict=True))


def get_remote_address_strategy(pattern: str | None) -> RemoteAddressStrategy:
    """RemoteAddressStrategyFactory.getRemoteAddressStrategy."""
    text = (pattern or "").strip()
    if not text:
        return BlankRemoteAddressStrategy()
    if text in ANY_ADDRESS_PATTERNS:
        return NullRemoteAddressStrategy()
    if text.endswith("}"):
        return MultipleRemoteAddressStrategy(_addresses(_expand_braces(text), pattern=text))
    if "," in text:
        return MultipleRemoteAddressStrategy(_addresses(text.split(","), pattern=text))
    if "*" in text or "-" in text:
        return _range(text)
    return MultipleRemoteAddressStrategy(_addresses([text], pattern=text))


def _expand_braces(text: str) -> list[str]:
    start = text.find("{")
    head = text[:start]
    if start < 0 or not head or head[-1] not in ".:":
        raise ConfigError(f"address pattern {text!r}: braces must hold the last part")
    return [head + item.strip() for item in text[start + 1 : -1].split(",")]


def _addresses(items: list[str], *, pattern: str) -> frozenset[str]:
    found = set()
    for item in items:
        canonical = canonical_ip(item)
        if canonical is None:
            raise ConfigError(f"address pattern {pattern!r}: {item.strip()!r} is not an address")
        found.add(canonical)
    return frozenset(found)


def _range(text: str) -> RangeRemoteAddressStrategy:
    ipv6 = ":" in text
    parts = _ipv6_parts(text) if ipv6 else text.split(".")
    if len(parts) != (IPV6_PARTS if ipv6 else IPV4_PARTS):
        raise ConfigError(f"address pattern {text!r}: wrong number of address parts")
    top = 0xFFFF if ipv6 else 255
    return RangeRemoteAddressStrategy(
        tuple(_bound(p.strip(), top, 16 if ipv6 else 10, text) for p in parts), ipv6
    )


def _ipv6_parts(text: str) -> list[str]:
    if "::" in text:
        head, _, tail = text.partition("::")
        left = head.split(":") if head else []
        right = tail.split(":") if tail else []
        return [*left, *(["0"] * (IPV6_PARTS - len(left) - len(right))), *right]
    parts = text.split(":")
    if parts[-1] == "*":
        parts += ["*"] * (IPV6_PARTS - len(parts))
    return parts


def _bound(part: str, top: int, base: int, pattern: str) -> tuple[int, int]:
    if part == "*":
        return (0, top)
    try:
        if "-" in part:
            low_text, high_text = part.split("-")
            low, high = int(low_text, base), int(high_text, base)
        else:
            low = high = int(part, base)
    except ValueError:
        raise ConfigError(f"address pattern {pattern!r}: bad part {part!r}") from None
    if not 0 <= low <= high <= top:
        raise ConfigError(f"address pattern {pattern!r}: part {part!r} out of range")
    return (low, high)
