"""Generators of good and bad uploads, written on the fly into a tmp dir (nothing binary is committed).

Each function takes the target directory and returns the path it wrote.
"""

from __future__ import annotations

import io
import random
import stat
import struct
import zipfile
import zlib
from pathlib import Path

import pymupdf
from PIL import Image

MiB = 1024 * 1024


# ---------------------------------------------------------------- good files


def _pdf_bytes(pages: int, *, width: float = 595, height: float = 842) -> bytes:
    doc = pymupdf.open()
    for number in range(1, pages + 1):
        page = doc.new_page(width=width, height=height)
        page.insert_text((72, 72), f"Invoice page {number} " + "total 1 234,56 " * 20, fontsize=9)
        # a small raster per page makes the file resemble a scan and spreads its objects out
        pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 64, 64), False)
        pix.set_rect(pix.irect, (number * 30 % 256, 120, 200))
        page.insert_image(pymupdf.Rect(72, 100, 272, 300), pixmap=pix)
    data = doc.tobytes(deflate=True)
    doc.close()
    return data


def make_pdf(directory: Path, name: str = "good.pdf", pages: int = 2) -> Path:
    path = directory / name
    path.write_bytes(_pdf_bytes(pages))
    return path


def _image(size: tuple[int, int] = (40, 30), color: str = "navy") -> Image.Image:
    return Image.new("RGB", size, color)


def make_png(directory: Path, name: str = "good.png") -> Path:
    path = directory / name
    _image().save(path, "PNG")
    return path


def make_jpeg(directory: Path, name: str = "good.jpg") -> Path:
    path = directory / name
    _image().save(path, "JPEG")
    return path


def make_tiff(directory: Path, name: str = "good.tif", pages: int = 3) -> Path:
    path = directory / name
    frames = [_image(color=c) for c in ("red", "green", "blue", "white", "black")[:pages]]
    frames[0].save(path, "TIFF", save_all=True, append_images=frames[1:])
    return path


def make_webp(directory: Path, name: str = "good.webp") -> Path:
    path = directory / name
    _image().save(path, "WEBP")
    return path


# ---------------------------------------------------------------- bad single files


def make_empty_pdf(directory: Path) -> Path:
    path = directory / "empty.pdf"
    path.write_bytes(b"")
    return path


def make_truncated_pdf(directory: Path, fraction: float = 0.5, name: str = "truncated.pdf") -> Path:
    """A real 6-page PDF cut at `fraction`, as an interrupted download leaves it.

    Cut at 0.5 MuPDF refuses it; cut at 0.8 MuPDF "repairs" it silently and the last page loses its image.
    """
    data = _pdf_bytes(6)
    path = directory / name
    path.write_bytes(data[: int(len(data) * fraction)])
    return path


def make_damaged_page_pdf(directory: Path) -> Path:
    """A complete 3-page PDF (ending in %%EOF) whose page 2 content object is overwritten."""
    data = _pdf_bytes(3)
    with pymupdf.open(stream=data, filetype="pdf") as doc:
        content_xref = doc[1].get_contents()[0]
    header = b"\n%d 0 obj" % content_xref
    start = data.index(header) + 1
    damaged = data[:start] + b"x" * (len(header) - 1) + data[start + len(header) - 1 :]
    path = directory / "damaged_page.pdf"
    path.write_bytes(damaged)
    return path


def make_corrupt_pdf(directory: Path) -> Path:
    path = directory / "corrupt.pdf"
    path.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 40)
    return path


def make_encrypted_pdf(directory: Path) -> Path:
    doc = pymupdf.open(stream=_pdf_bytes(1), filetype="pdf")
    path = directory / "encrypted.pdf"
    doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="secret", owner_pw="owner")
    doc.close()
    return path


def make_many_pages_pdf(directory: Path, pages: int = 12) -> Path:
    path = directory / "many_pages.pdf"
    path.write_bytes(_pdf_bytes(pages))
    return path


def make_huge_page_pdf(directory: Path) -> Path:
    """One page of 200 × 200 inches: about 1.6 billion pixels at 200 dpi."""
    path = directory / "huge_page.pdf"
    path.write_bytes(_pdf_bytes(1, width=14_400, height=14_400))
    return path


def make_fake_jpg(directory: Path) -> Path:
    """A PNG named .jpg."""
    path = directory / "fake.jpg"
    buffer = io.BytesIO()
    _image().save(buffer, "PNG")
    path.write_bytes(buffer.getvalue())
    return path


def make_text_as_pdf(directory: Path) -> Path:
    path = directory / "notapdf.pdf"
    path.write_text("Dear customer,\nplease find the invoice attached.\n", encoding="utf-8")
    return path


def make_bomb_png(directory: Path, width: int = 100_000, height: int = 100_000) -> Path:
    """A 1×1 PNG whose IHDR is patched to claim width × height (CRC fixed so the header is valid)."""
    buffer = io.BytesIO()
    Image.new("L", (1, 1)).save(buffer, "PNG")
    data = bytearray(buffer.getvalue())
    # signature (8) | length (4) | b"IHDR" (4) | width (4) | height (4) | ... | CRC over type+data
    assert data[12:16] == b"IHDR"
    data[16:24] = struct.pack(">II", width, height)
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(data[12:29])))
    path = directory / "bomb.png"
    path.write_bytes(bytes(data))
    return path


def make_truncated_png(directory: Path) -> Path:
    buffer = io.BytesIO()
    Image.effect_noise((200, 200), 64).save(buffer, "PNG")
    data = buffer.getvalue()
    path = directory / "truncated.png"
    path.write_bytes(data[: len(data) // 2])
    return path


def make_truncated_jpeg(directory: Path) -> Path:
    buffer = io.BytesIO()
    Image.effect_noise((400, 400), 64).convert("RGB").save(buffer, "JPEG")
    data = buffer.getvalue()
    path = directory / "truncated.jpg"
    path.write_bytes(data[: len(data) // 2])
    return path


def make_big_bin(directory: Path, size: int = 4096) -> Path:
    path = directory / "big.bin"
    path.write_bytes(b"\x00" * size)
    return path


def make_docx(directory: Path) -> Path:
    """A minimal Office Open XML container (what a .docx is: a zip with [Content_Types].xml)."""
    path = directory / "unsupported.docx"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
        zf.writestr("word/document.xml", '<?xml version="1.0"?><document/>')
    return path


def make_txt(directory: Path) -> Path:
    path = directory / "unsupported.txt"
    path.write_text("just some notes\n", encoding="utf-8")
    return path


# ---------------------------------------------------------------- zips


def _png_bytes() -> bytes:
    buffer = io.BytesIO()
    _image().save(buffer, "PNG")
    return buffer.getvalue()


def make_traversal_zip(directory: Path) -> Path:
    """Members ../evil.pdf, /abs.pdf, C:\\win.pdf and one good PNG."""
    path = directory / "traversal.zip"
    pdf = _pdf_bytes(1)
    with zipfile.ZipFile(path, "w") as zf:
        # ZipInfo keeps these names as given; zipfile's own extract() would sanitise them, we must too
        zf.writestr(zipfile.ZipInfo("../evil.pdf"), pdf)
        zf.writestr(zipfile.ZipInfo("/abs.pdf"), pdf)
        zf.writestr(zipfile.ZipInfo("C:\\win.pdf"), pdf)
        zf.writestr("scans/good.png", _png_bytes())
    return path


def make_nested_zip(directory: Path) -> Path:
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as zf:
        zf.writestr("inner.pdf", _pdf_bytes(1))
    path = directory / "nested.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("inner.zip", inner.getvalue())
        zf.writestr("good.png", _png_bytes())
    return path


def make_many_files_zip(directory: Path, count: int = 12) -> Path:
    path = directory / "many_files.zip"
    png = _png_bytes()
    with zipfile.ZipFile(path, "w") as zf:
        for number in range(count):
            zf.writestr(f"page{number:03d}.png", png)
    return path


def _write_zeros(zf: zipfile.ZipFile, name: str, size: int) -> None:
    with zf.open(name, "w") as member:
        chunk = b"\x00" * MiB
        for _ in range(size // MiB):
            member.write(chunk)


def make_zip_bomb(directory: Path, size: int = 20 * MiB) -> Path:
    """One member of zeros compressing about 1000:1, beside a good PNG."""
    path = directory / "zipbomb.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("good.png", _png_bytes())
        _write_zeros(zf, "zeros.pdf", size)
    return path


def make_big_total_zip(directory: Path, members: int = 3, size: int = 2 * MiB) -> Path:
    """Members that compress about 2:1 (no ratio alarm) whose sizes add up to members × size."""
    path = directory / "big_total.zip"
    noise = random.Random(7)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for number in range(members):
            # hex digits of noise deflate about 2:1, so the archive is smaller than what it expands to
            zf.writestr(f"scan{number}.pdf", noise.randbytes(size // 2).hex().encode())
    return path


def _patch_central_directory(
    path: Path, member: str, *, compress_size: int | None, file_size: int | None
) -> None:
    """Rewrite the sizes a member's central-directory record declares (what readers trust)."""
    data = bytearray(path.read_bytes())
    encoded = member.encode()
    offset = data.find(b"PK\x01\x02")
    while offset != -1:
        name_length = struct.unpack_from("<H", data, offset + 28)[0]
        if data[offset + 46 : offset + 46 + name_length] == encoded:
            if compress_size is not None:
                struct.pack_into("<I", data, offset + 20, compress_size)
            if file_size is not None:
                struct.pack_into("<I", data, offset + 24, file_size)
            path.write_bytes(bytes(data))
            return
        offset = data.find(b"PK\x01\x02", offset + 4)
    raise ValueError(f"{member} not in {path}")


def make_lying_ratio_zip(directory: Path, size: int = 20 * MiB) -> Path:
    """A zip bomb whose header claims its compressed size equals its real size (ratio 1:1)."""
    path = make_zip_bomb(directory, size)
    lying = path.with_name("lying_ratio.zip")
    path.rename(lying)
    _patch_central_directory(lying, "zeros.pdf", compress_size=size, file_size=None)
    return lying


def make_lying_size_zip(directory: Path, size: int = 4 * MiB, declared: int = 1000) -> Path:
    """A member that declares 1 000 bytes but inflates to `size`."""
    path = directory / "lying_size.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        _write_zeros(zf, "zeros.pdf", size)
    _patch_central_directory(path, "zeros.pdf", compress_size=None, file_size=declared)
    return path


def make_mixed_zip(directory: Path) -> Path:
    """Good PDF, PNG and JPEG beside bad members, a folder and macOS junk."""
    path = directory / "mixed.zip"
    jpeg = io.BytesIO()
    _image().save(jpeg, "JPEG")
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("batch/", b"")
        zf.writestr("batch/invoice.pdf", _pdf_bytes(2))
        zf.writestr("batch/photo.png", _png_bytes())
        zf.writestr(zipfile.ZipInfo("../../escape.jpg"), jpeg.getvalue())
        zf.writestr("batch/photo2.jpg", jpeg.getvalue())
        zf.writestr("__MACOSX/batch/._invoice.pdf", b"\x00\x05\x16\x07junk")
        zf.writestr("batch/._photo.png", b"\x00\x05\x16\x07junk")
        zf.writestr("batch/.DS_Store", b"junk")
        zf.writestr("batch/empty.pdf", b"")
    return path


def make_empty_zip(directory: Path) -> Path:
    path = directory / "empty.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("folder/", b"")
        zf.writestr("__MACOSX/._x", b"junk")
    return path


def make_encrypted_member_zip(directory: Path) -> Path:
    """A member flagged as password-encrypted (zipfile cannot encrypt; the flag is what readers obey)."""
    path = directory / "encrypted_member.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("secret.png", _png_bytes())
        zf.writestr("good.png", _png_bytes())
    data = bytearray(path.read_bytes())
    offset = data.find(b"PK\x01\x02")  # the first central-directory record is secret.png
    flags = struct.unpack_from("<H", data, offset + 8)[0]
    struct.pack_into("<H", data, offset + 8, flags | 0x1)
    path.write_bytes(bytes(data))
    return path


def make_symlink_member_zip(directory: Path) -> Path:
    path = directory / "symlink.zip"
    link = zipfile.ZipInfo("link.pdf")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(link, "/etc/passwd")
        zf.writestr("good.png", _png_bytes())
    return path


def make_same_name_zip(directory: Path) -> Path:
    """Two different files that share a base name in different folders."""
    path = directory / "same_name.zip"
    red, blue = io.BytesIO(), io.BytesIO()
    _image(color="red").save(red, "PNG")
    _image(color="blue").save(blue, "PNG")
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("north/scan.png", red.getvalue())
        zf.writestr("south/scan.png", blue.getvalue())
    return path


def make_zip_named_pdf(directory: Path) -> Path:
    path = make_nested_zip(directory)
    return path.rename(directory / "archive.pdf")


def make_damaged_member_zip(directory: Path) -> Path:
    """A deflated PDF member whose compressed bytes are overwritten half-way, beside a good PNG."""
    path = directory / "damaged_member.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("scan.pdf", _pdf_bytes(3))
        zf.writestr("good.png", _png_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("scan.pdf")
    data = bytearray(path.read_bytes())
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    middle = start + info.compress_size // 2
    data[middle : middle + 64] = b"\xff" * 64
    path.write_bytes(bytes(data))
    return path
