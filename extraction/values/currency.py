"""Currency codes and the symbols printed for them (pure data, shared by the invoice rules and proofs)."""

from __future__ import annotations

import re

# ISO 4217 active currency codes; fund and precious-metal codes (XAU, XDR...) are left out on purpose.
ISO_4217 = frozenset(
    """
AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF
CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD
HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD
MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN
PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP
TRY TTD TWD TZS UAH UGX USD UYU UZS VES VED VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG ZWL
""".split()
)

# Symbols are not accepted as the value (the desk and exports want codes), but the feedback names the code
# when the symbol has only one reading, and lists the usual readings when it has several.
SYMBOL_CODES: dict[str, tuple[str, ...]] = {
    "€": ("EUR",),
    "£": ("GBP",),
    "₹": ("INR",),
    "₽": ("RUB",),
    "₺": ("TRY",),
    "₩": ("KRW",),
    "₴": ("UAH",),
    "₪": ("ILS",),
    "₫": ("VND",),
    "₱": ("PHP",),
    "ZŁ": ("PLN",),
    "KČ": ("CZK",),
    "R$": ("BRL",),
    "US$": ("USD",),
    "C$": ("CAD", "NIO"),
    "A$": ("AUD",),
    "CHF": ("CHF",),
    "BS": ("VES", "BOB"),
    "$": ("USD", "CAD", "AUD", "MXN", "ARS", "COP", "CLP", "NZD", "SGD", "HKD"),
    "¥": ("JPY", "CNY"),
    "KR": ("SEK", "NOK", "DKK", "ISK"),
    "R": ("ZAR",),
    # the rupee is printed "Rs" or "Rs." as often as "₹" (India, Pakistan, Sri Lanka, Nepal)
    "RS": ("INR", "PKR", "LKR", "NPR"),
    "₨": ("INR", "PKR", "LKR", "NPR"),
}


def symbols_for(code: str) -> list[str]:
    """The symbols a page may print for an ISO code ("EUR" -> ["€"]). A lone letter ("R") is left out:
    it is too common in text to show anything."""
    return [symbol for symbol, codes in SYMBOL_CODES.items() if code in codes and not (len(symbol) == 1 and symbol.isalpha())]


def shows_currency(code: str, text: str) -> bool:
    """Whether `text` prints the currency `code`, as the code itself or as one of its symbols."""
    upper = text.upper()
    for mark in [code, *symbols_for(code)]:
        if mark.isalpha():  # letters must stand as a word: "KR" in "100 kr", not in "KRAKOW"
            if re.search(rf"(?<![A-ZÀ-Ž]){re.escape(mark)}(?![A-ZÀ-Ž])", upper):
                return True
        elif mark in upper:
            return True
    return False
