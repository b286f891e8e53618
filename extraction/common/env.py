"""Read settings from the environment (pure): a bad value raises BadSetting naming the variable.

reviewer/settings.py reads Django's settings with these at start-up; extraction/llm/config.py reads the
LLM_* variables with them, so every variable is checked the same way and says what is wrong the same way.
"""

from __future__ import annotations

import ipaddress
import math
import os
from collections.abc import Iterable, Mapping


class BadSetting(ValueError):
    """A variable holds a value the setting cannot take; the message names the variable and the value."""


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "", *, environ: Mapping[str, str] = os.environ) -> str:
    return environ.get(name, default).strip()


def env_bool(name: str, default: bool, *, environ: Mapping[str, str] = os.environ) -> bool:
    raw = environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise BadSetting(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no, on/off)")


def env_int(name: str, default: int, *, minimum: int | None = None, maximum: int | None = None,
            environ: Mapping[str, str] = os.environ) -> int:
    raw = environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip().replace("_", ""))
    except ValueError:
        raise BadSetting(f"{name}={raw!r} is not a whole number") from None
    if minimum is not None and value < minimum:
        raise BadSetting(f"{name}={value} is below the minimum of {minimum}")
    if maximum is not None and value > maximum:
        raise BadSetting(f"{name}={value} is above the maximum of {maximum}")
    return value


def env_float(name: str, default: float, *, minimum: float | None = None, maximum: float | None = None,
              environ: Mapping[str, str] = os.environ) -> float:
    raw = environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw.strip())
    except ValueError:
        raise BadSetting(f"{name}={raw!r} is not a number") from None
    if not math.isfinite(value):
        raise BadSetting(f"{name}={raw!r} is not a finite number")
    if minimum is not None and value < minimum:
        raise BadSetting(f"{name}={value} is below the minimum of {minimum}")
    if maximum is not None and value > maximum:
        raise BadSetting(f"{name}={value} is above the maximum of {maximum}")
    return value


def env_choice(name: str, default: str, choices: Iterable[str], *, environ: Mapping[str, str] = os.environ,
               fold_case: bool = False) -> str:
    allowed = list(choices)
    value = env_str(name, default, environ=environ) or default
    value = value.lower() if fold_case else value
    if value not in allowed:
        raise BadSetting(f"{name}={value!r} is not one of: {', '.join(allowed)}")
    return value


def env_list(name: str, default: list[str], *, environ: Mapping[str, str] = os.environ) -> list[str]:
    raw = environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_networks(name: str, *, environ: Mapping[str, str] = os.environ) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """Comma-separated addresses or CIDR networks (10.0.0.0/8, 127.0.0.1, ::1)."""
    networks = []
    for item in env_list(name, [], environ=environ):
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise BadSetting(f"{name}: {item!r} is not an IP address or network") from None
    return networks
