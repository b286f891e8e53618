"""A small pen over one PyMuPDF Shape, so the acta layouts read as geometry (pure; one commit: fast)."""

from __future__ import annotations

import pymupdf

BOLD = {"helv": "hebo", "tiro": "tibo", "cour": "cobo", "hebo": "hebo", "tibo": "tibo", "cobo": "cobo"}


def text_width(s: str, *, size: float, font: str = "helv") -> float:
    return pymupdf.get_text_length(s, fontname=font, fontsize=size)


class Pen:
    def __init__(self, page: pymupdf.Page):
        self.page = page
        self.shape = page.new_shape()

    def text(self, x: float, y: float, s: str, *, size: float = 8, font: str = "helv", align: str = "left",
             width: float = 0) -> None:
        w = text_width(s, size=size, font=font)
        if align == "center":
            x += (width - w) / 2
        elif align == "right":
            x += width - w
        self.shape.insert_text((x, y), s, fontsize=size, fontname=font, color=(0, 0, 0))

    def rect(self, x0: float, y0: float, x1: float, y1: float, *, fill: tuple | None = None,
             width: float = 0.6, stroke: bool = True) -> None:
        self.shape.draw_rect(pymupdf.Rect(x0, y0, x1, y1))
        self.shape.finish(color=(0, 0, 0) if stroke else None, fill=fill, width=width)

    def line(self, x0: float, y0: float, x1: float, y1: float, width: float = 0.5) -> None:
        self.shape.draw_line((x0, y0), (x1, y1))
        self.shape.finish(color=(0, 0, 0), width=width)

    def commit(self) -> None:
        self.shape.commit()


def signatures(pen: Pen, x: float, y: float, width: float, n: int = 3, *, font: str = "helv") -> None:
    """Signature lines with the poll workers' roles under them (about 42 pt tall)."""
    step = width / n
    for i, who in enumerate(["PRESIDENTE(A)", "MIEMBRO", "SECRETARIO(A)", "TESTIGO"][:n]):
        x0 = x + i * step + 8
        pen.line(x0, y + 30, x0 + step - 16, y + 30)
        pen.text(x0, y + 40, who, size=6.5, font=font, align="center", width=step - 16)
