"""The fixed content of a tally sheet (acta): candidates and their party rows, in sheet (QR) order."""

from __future__ import annotations

CANDIDATES: list[tuple[str, list[str]]] = [
    ("NICOLAS MADURO", ["PSUV", "PCV", "TUPAMARO", "PPT", "MSV", "PODEMOS", "MEP", "APC", "ORA", "UPV", "EV", "PVV", "PFV"]),
    ("LUIS EDUARDO MARTINEZ", ["AD", "COPEI", "MR", "BR", "DDP", "UNE"]),
    ("JAVIER BERTUCCI", ["EL CAMBIO"]),
    ("JOSE BRITO", ["PV", "UVV", "MPJ", "AP"]),
    ("ANTONIO ECARRI", ["LAPIZ", "AREPA", "FV", "UNVC", "MIN", "CMC"]),
    ("CLAUDIO FERMIN", ["SPV"]),
    ("DANIEL CEBALLOS", ["VPA", "NUVIPA"]),
    ("EDMUNDO GONZALEZ", ["UNTC", "MPV", "MUD"]),
    ("ENRIQUE MARQUEZ", ["CENTRADOS"]),
    ("BENJAMIN RAUSSEO", ["CONDE"]),
]

# (candidate, party) for each of the 38 rows, in sheet order.
ROWS: list[tuple[str, str]] = [(c, p) for c, parties in CANDIDATES for p in parties]
PARTIES: list[str] = [p for _, p in ROWS]

assert len(ROWS) == 38

# The three totals under the rows, in sheet order; each is printed in digits and in digit words too.
TOTAL_KEYS = ("valid_votes", "null_votes", "total_votes")

# Spanish digit words as written on the sheets ("CERO CERO CINCO SEIS" = 0056).
DIGIT_WORDS = ["CERO", "UNO", "DOS", "TRES", "CUATRO", "CINCO", "SEIS", "SIETE", "OCHO", "NUEVE"]
