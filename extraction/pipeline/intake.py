"""Intake of uploaded files: type sniffing, limits, safe zip expansion (pure: no ORM, no Celery).

One file past 400 lines on purpose: it is the uploads' one gate, and its checks share the sniffing, the limits
and the wording of every message a user reads, so they are read and changed together.

The ingest service stores every upload unchanged, then calls `expand_upload` (a zip becomes one Entry per member)
and `inspect_file` on each entry. Anything wrong becomes an `IntakeError` on that one document, with a
slug (`code`) and a message that says what is wrong, with numbers, and what the user can do.

Nothing here decodes pixels before the size is known to be safe: Pillow image plugins are opened directly
(header only, no global limit to tune) and PDF pages are measured from their boxes.
"""

from __future__ import annotations

import hashlib
import lzma
import re
import stat
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pymupdf
from PIL import Image, JpegImagePlugin, PngImagePlugin, TiffImagePlugin, WebPImagePlugin

MiB = 1024 * 1024
SNIFF_BYTES = 1024  # a PDF header may sit anywhere in the first 1024 bytes
_CHUNK = MiB

KINDS = ("pdf", "png", "jpeg", "tiff", "webp", "zip")
MIME = {
    "pdf": "application/pdf",
    "png": "image/png",
    "jpeg": "image/jpeg",
    "tiff": "image/tiff",
    "webp": "image/webp",
}
_LABEL = {
    "pdf": "a PDF",
    "png": "a PNG image",
    "jpeg": "a JPEG image",
    "tiff": "a TIFF image",
    "webp": "a WebP image",
    "zip": "a zip archive",
}
_EXTENSION_KIND = {
    "pdf": "pdf",
    "png": "png",
    "jpg": "jpeg",
    "jpeg": "jpeg",
    "jpe": "jpeg",
    "jfif": "jpeg",
    "tif": "tiff",
    "tiff": "tiff",
    "webp": "webp",
    "zip": "zip",
}
_OFFICE = {
    "docx": "a Word document (.docx)",
    "docm": "a Word document (.docm)",
    "xlsx": "an Excel workbook (.xlsx)",
    "xlsm": "an Excel workbook (.xlsm)",
    "pptx": "a PowerPoint presentation (.pptx)",
    "odt": "an OpenDocument text (.odt)",
    "ods": "an OpenDocument spreadsheet (.ods)",
    "odp": "an OpenDocument presentation (.odp)",
    "epub": "an EPUB e-book (.epub)",
}
_ACCEPTED = "Accepted types: PDF, PNG, JPEG, TIFF, WebP (or a zip of them)."
_IMAGE_OPENERS = {
    "png": PngImagePlugin.PngImageFile,
    "jpeg": JpegImagePlugin.JpegImageFile,
    "tiff": TiffImagePlugin.TiffImageFile,
    "webp": WebPImagePlugin.WebPImageFile,
}
_JUNK_NAMES = {".DS_Store", "Thumbs.db", "desktop.ini"}


@dataclass(frozen=True)
class Limits:
    max_file_bytes: int = 50 * MiB  # one document (also one zip member)
    max_pages: int = 200
    max_pixels: int = 60_000_000  # one image or one rendered page
    render_dpi: int = 200  # PDF pages are measured as they will be rendered
    max_zip_files: int = 500
    max_zip_total_bytes: int = 500 * MiB  # uncompressed sum; also caps the zip file itself
    max_zip_ratio: float = 100.0  # uncompressed / compressed, per member
    zip_ratio_min_bytes: int = MiB  # tiny members compress absurdly well and are harmless
    # what a document over max_pages is told to do
    pages_advice: str = "Split it into smaller files and upload them in one batch."

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if isinstance(value, int | float) and value <= 0:
                raise ValueError(f"Limits.{name} must be positive, got {value}")


class IntakeError(Exception):
    """A bad upload: `code` is a short slug for code, `message` is shown to the user."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"IntakeError({self.code!r}, {self.message!r})"


@dataclass(frozen=True)
class FileInfo:
    kind: str  # "pdf" or "image" (as SourceDocument.kind)
    mime: str
    pages: int
    sha256: str
    size: int


@dataclass(frozen=True)
class Entry:
    """One document-to-be from an upload.

    `name` is the name the user gave (a zip member's path as stored in the zip). `path` is where its bytes
    are on disk; it is set whenever they could be kept safely, even alongside an error (e.g. a nested zip),
    and is None when extraction was refused (bomb, too large, damaged). `error` is None for a usable entry.
    """

    name: str
    path: Path | None
    error: IntakeError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


# ---------------------------------------------------------------- formatting


def _n(value: float) -> str:
    """12345678 -> '12 345 678' (spaces read well in English and Spanish alike)."""
    return f"{round(value):,}".replace(",", " ")


def _bytes(value: int) -> str:
    if value < MiB:
        return f"{_n(value)} bytes"
    return f"{value / MiB:.1f}".rstrip("0").rstrip(".") + " MiB"


def _extension(filename: str) -> str:
    suffix = PurePosixPath(filename.replace("\\", "/")).suffix
    return suffix[1:].lower()


# ---------------------------------------------------------------- sniffing


def sniff_kind(data_head: bytes) -> str | None:
    """The type from magic bytes: "pdf", "png", "jpeg", "tiff", "webp", "zip", or None."""
    if data_head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if data_head.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if data_head[:4] in (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+"):  # classic and BigTIFF
        return "tiff"
    if data_head[:4] == b"RIFF" and data_head[8:12] == b"WEBP":
        return "webp"
    if data_head[:4] in (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08"):
        return "zip"
    if b"%PDF-" in data_head[:SNIFF_BYTES]:
        return "pdf"
    return None


def _read_head(path: Path) -> bytes:
    with path.open("rb") as fh:
        return fh.read(SNIFF_BYTES)


def _office_label(path: Path, filename: str) -> str | None:
    """An Office/OpenDocument file is a zip too; say which one it is instead of calling it an archive."""
    ext = _extension(filename)
    if ext in _OFFICE:
        return _OFFICE[ext]
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return None
    if "[Content_Types].xml" in names:
        return "an Office document (Word, Excel or PowerPoint)"
    if names[:1] == ["mimetype"]:  # OpenDocument and EPUB store it first, by specification
        return "an OpenDocument or EPUB file"
    return None


def _describe(head: bytes, path: Path, filename: str) -> str:
    """What the content looks like, for messages; never decides acceptance."""
    kind = sniff_kind(head)
    if kind == "zip":
        return _office_label(path, filename) or _LABEL["zip"]
    if kind:
        return _LABEL[kind]
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "a GIF image"
    if head[:2] == b"BM":
        return "a BMP image"
    if head[4:8] == b"ftyp" and head[8:12] in (b"heic", b"heix", b"mif1", b"msf1", b"heif", b"avif"):
        return "a HEIC/HEIF/AVIF image (a phone photo format)"
    if head.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        return "an old Microsoft Office document (.doc/.xls/.ppt)"
    if head.startswith(b"{\\rtf"):
        return "an RTF document"
    if head.startswith((b"\x1f\x8b", b"7z\xbc\xaf\x27\x1c", b"Rar!")):
        return "a compressed archive (gzip, 7-Zip or RAR)"
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        # a cut inside a multi-byte character at the end of the head is still text
        try:
            text = head[:-3].decode("utf-8")
        except UnicodeDecodeError:
            return "unrecognised binary data"
    if "\x00" in text:
        return "unrecognised binary data"
    if re.search(r"<(!doctype html|html)", text, re.IGNORECASE):
        return "an HTML page"
    return "plain text"


# ---------------------------------------------------------------- hashing


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


# ---------------------------------------------------------------- one file


def inspect_file(*, path: Path, filename: str, limits: Limits) -> FileInfo:
    """Check one uploaded file and describe it; raise IntakeError when it cannot become a document."""
    path = Path(path)
    size = path.stat().st_size
    if size == 0:
        raise IntakeError(
            "empty", f'"{filename}" is empty (0 bytes). The upload may have failed: upload the file again.'
        )
    if size > limits.max_file_bytes:
        raise IntakeError(
            "too_large",
            f'"{filename}" is {_bytes(size)}, over the limit of {_bytes(limits.max_file_bytes)}. '
            "Split it into smaller files or scan at a lower resolution, and upload again.",
        )
    head = _read_head(path)
    kind = sniff_kind(head)
    ext = _extension(filename)
    named_kind = _EXTENSION_KIND.get(ext)
    if kind is None or kind == "zip":
        what = _describe(head, path, filename)
        if named_kind is not None and named_kind != kind:
            raise IntakeError(
                "false_extension",
                f'"{filename}" is named .{ext} but its content is {what}, not {_LABEL[named_kind]}. '
                f"Upload the real file. {_ACCEPTED}",
            )
        hint = " Export it as PDF and upload that." if "document" in what or "text" in what else ""
        if kind == "zip" and what == _LABEL["zip"]:
            hint = " A zip can only be uploaded as a whole batch, not inside another zip."
        raise IntakeError(
            "unsupported_type", f'"{filename}" is {what}, which Proofdesk cannot read. {_ACCEPTED}{hint}'
        )
    if named_kind is not None and named_kind != kind:
        real_ext = "jpg" if kind == "jpeg" else kind
        raise IntakeError(
            "false_extension",
            f'"{filename}" is named .{ext} but its content is {_LABEL[kind]}. '
            f"Rename it to .{real_ext} (or export it again as .{ext}) and upload again.",
        )
    if kind == "pdf":
        pages = _check_pdf(path, filename, limits)
        return FileInfo(kind="pdf", mime=MIME["pdf"], pages=pages, sha256=sha256_file(path), size=size)
    pages = _check_image(path, filename, kind, limits)
    return FileInfo(kind="image", mime=MIME[kind], pages=pages, sha256=sha256_file(path), size=size)


def _bomb(filename: str, where: str, width: int, height: int, limits: Limits) -> IntakeError:
    return IntakeError(
        "decompression_bomb",
        f'"{filename}" {where} is {_n(width)} × {_n(height)} = {_n(width * height)} px, '
        f"over the limit of {_n(limits.max_pixels)} px. "
        "Scale it down or scan at a lower resolution, and upload again.",
    )


def _too_many_pages(filename: str, count: str, limits: Limits) -> IntakeError:
    return IntakeError(
        "too_many_pages",
        f'"{filename}" has {count} pages, over the limit of {_n(limits.max_pages)} pages. {limits.pages_advice}',
    )


def _corrupt_pdf(filename: str, what: str) -> IntakeError:
    return IntakeError(
        "corrupt_pdf",
        f'"{filename}" is a damaged PDF: {what}. '
        "Download or export the original again and upload the complete file.",
    )


def _check_pdf(path: Path, filename: str, limits: Limits) -> int:
    truncated = _corrupt_pdf(
        filename,
        f"it ends abruptly after {_bytes(path.stat().st_size)}, without the end-of-file marker "
        "(the file was cut off, for example by an interrupted upload or download)",
    )
    try:
        doc = pymupdf.open(path, filetype="pdf")
    except Exception as exc:  # MuPDF raises several types; its text names our server path, so leave it out
        if not _ends_with_eof_marker(path):
            raise truncated from exc
        raise _corrupt_pdf(filename, "its structure cannot be read") from exc
    with doc:
        if doc.needs_pass:
            raise IntakeError(
                "encrypted_pdf",
                f'"{filename}" is protected by a password (encrypted). '
                "Open it, save or print a copy without the password, and upload that.",
            )
        if doc.is_repaired and not _ends_with_eof_marker(path):
            # MuPDF rebuilds a cut file silently; its last pages or images would be missing or blank.
            raise truncated
        count = doc.page_count
        if count == 0:
            raise _corrupt_pdf(filename, "it has no readable pages")
        if count > limits.max_pages:
            raise _too_many_pages(filename, _n(count), limits)
        zoom = limits.render_dpi / 72
        for index in range(count):
            number = index + 1
            try:
                page = doc.load_page(index)
                missing = [x for x in page.get_contents() if not doc.xref_is_stream(x)]
                page.get_text("text")  # parses the content streams without decoding images
            except Exception as exc:
                raise _corrupt_pdf(filename, f"page {number} cannot be read ({exc})") from exc
            if missing:
                raise _corrupt_pdf(filename, f"the content of page {number} is missing")
            width, height = round(page.rect.width * zoom), round(page.rect.height * zoom)
            if width * height > limits.max_pixels:
                raise _bomb(
                    filename,
                    f"page {number} ({_n(page.rect.width)} × {_n(page.rect.height)} pt) "
                    f"rendered at {limits.render_dpi} dpi",
                    width,
                    height,
                    limits,
                )
        return count


def _ends_with_eof_marker(path: Path) -> bool:
    with path.open("rb") as fh:
        fh.seek(max(0, path.stat().st_size - 2048))
        return b"%%EOF" in fh.read()


def _check_image(path: Path, filename: str, kind: str, limits: Limits) -> int:
    label = _LABEL[kind]
    try:
        # The plugin class reads only the header and skips Pillow's process-wide bomb check, whose
        # limit is not ours; we compare the size with our own limit before anything is decoded.
        with _IMAGE_OPENERS[kind](str(path)) as img:
            pages = _measure_frames(img, filename, kind, limits)
            _check_image_data(img, kind)
    except IntakeError:
        raise
    except Exception as exc:
        raise IntakeError(
            "corrupt_image",
            f'"{filename}" is a damaged {label.removeprefix("a ")}: it cannot be read ({exc}). '
            "Export or scan it again and upload the new file.",
        ) from exc
    return pages


def _measure_frames(img: Image.Image, filename: str, kind: str, limits: Limits) -> int:
    if kind != "tiff":  # other formats' extra frames are animation, not pages
        width, height = img.size
        if width * height > limits.max_pixels:
            raise _bomb(filename, "(an image)", width, height, limits)
        return 1
    pages = 0
    while True:  # seek reads one directory at a time; stop at the limit instead of counting all
        try:
            img.seek(pages)
        except EOFError:
            break
        pages += 1
        if pages > limits.max_pages:
            raise _too_many_pages(filename, f"more than {_n(limits.max_pages)}", limits)
        width, height = img.size
        if width * height > limits.max_pixels:
            raise _bomb(filename, f"page {pages}", width, height, limits)
    img.seek(0)
    return pages


def _check_image_data(img: Image.Image, kind: str) -> None:
    """Cheap checks that the pixel data is whole, run only after the size is known to be safe."""
    if kind == "png":
        img.verify()  # walks the chunks and their CRCs to IEND without inflating pixels
    elif kind == "jpeg":
        width, height = img.size
        img.draft("RGB", (max(1, width // 8), max(1, height // 8)))  # decode at 1/8 scale
        img.load()  # a truncated JPEG raises here


# ---------------------------------------------------------------- uploads and zips


def expand_upload(*, path: Path, filename: str, out_dir: Path, limits: Limits) -> list[Entry]:
    """One Entry per document in the upload: a zip's member files (extracted flat into out_dir), or the file.

    A problem with one member is an error Entry and the rest goes on; a problem with the zip as a whole
    (damaged, too big, too many files, empty) is a single error Entry for the zip itself. `out_dir` must be
    new or empty (one folder per upload): ValueError otherwise. Disk faults (OSError) propagate.
    """
    path = Path(path)
    head = _read_head(path)
    named_kind = _EXTENSION_KIND.get(_extension(filename))
    is_archive = sniff_kind(head) == "zip" and named_kind in (None, "zip")
    if not is_archive or _office_label(path, filename):
        return [Entry(name=filename, path=path)]  # inspect_file judges it
    try:
        return _expand_zip(path, filename, Path(out_dir), limits)
    except IntakeError as exc:
        return [Entry(name=filename, path=path, error=exc)]


def _expand_zip(path: Path, filename: str, out_dir: Path, limits: Limits) -> list[Entry]:
    size = path.stat().st_size
    if size > limits.max_zip_total_bytes:
        raise IntakeError(
            "too_large",
            f'The zip "{filename}" is {_bytes(size)}, '
            f"over the limit of {_bytes(limits.max_zip_total_bytes)}. "
            "Split it into several zips and upload them as separate batches.",
        )
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise IntakeError(
            "corrupt_zip",
            f'The zip "{filename}" is damaged and cannot be opened ({exc}). '
            "Create the zip again and upload it.",
        ) from exc
    with zf:
        infos = zf.infolist()
        # A folder entry is skipped, unless it carries bytes: then it is reported, never dropped unseen.
        files = [info for info in infos
                 if (not info.is_dir() or info.file_size > 0) and not _is_junk(info.filename)]
        if not files:
            raise IntakeError(
                "empty", f'The zip "{filename}" contains no files. Add the documents and upload again.'
            )
        if len(files) > limits.max_zip_files:
            raise IntakeError(
                "zip_too_many_files",
                f'The zip "{filename}" holds {_n(len(files))} files, over the limit of '
                f"{_n(limits.max_zip_files)}. Split it into several zips.",
            )
        declared = sum(info.file_size for info in files)
        if declared > limits.max_zip_total_bytes:
            raise IntakeError(
                "zip_bomb",
                f'The zip "{filename}" would expand to {_bytes(declared)}, over the limit of '
                f"{_bytes(limits.max_zip_total_bytes)}. Split it into several zips.",
            )
        if out_dir.exists() and any(out_dir.iterdir()):
            raise ValueError(f"out_dir must be a new or empty folder, one per upload: {out_dir}")
        spans = _compressed_spans(infos, zf.start_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        wanted = {id(info) for info in files}
        return [
            _extract_member(zf, info, index, spans[info.header_offset], out_dir, limits)
            for index, info in enumerate(infos, start=1)
            if id(info) in wanted
        ]


def _is_junk(name: str) -> bool:
    parts = name.replace("\\", "/").split("/")
    return "__MACOSX" in parts or parts[-1].startswith("._") or parts[-1] in _JUNK_NAMES


def _compressed_spans(infos: list[zipfile.ZipInfo], start_dir: int) -> dict[int, int]:
    """Bytes each member really occupies (to the next member or the directory), so a header that
    overstates its compressed size cannot hide a huge compression ratio."""
    offsets = sorted({info.header_offset for info in infos} | {start_dir})
    following = dict(zip(offsets, offsets[1:], strict=False))
    return {
        info.header_offset: min(
            info.compress_size, following.get(info.header_offset, start_dir) - info.header_offset
        )
        for info in infos
    }


def _unsafe_member_path(name: str) -> str | None:
    """Why a member's path would land outside the folder, or None when it is a plain relative path."""
    posix = name.replace("\\", "/")
    if "\x00" in posix:
        return "its name contains a NUL character"
    if posix.startswith("/"):
        return "its path is absolute"
    if re.match(r"^[A-Za-z]:", posix):
        return "its path starts with a drive letter"
    if ".." in posix.split("/"):
        return "its path climbs out of the folder with '..'"
    return None


def _safe_name(index: int, member: str) -> str:
    """A flat, unique file name: never a path taken from the zip."""
    base = PurePosixPath(member.replace("\\", "/")).name
    base = re.sub(r"[^\w.\- ]", "_", base).lstrip(". ") or "file"
    if len(base) > 120:
        stem, dot, ext = base.rpartition(".")
        base = (stem[:110] + dot + ext[:9]) if dot and len(ext) < 10 else base[:120]
    return f"{index:04d}_{base}"


def _extract_member(
    zf: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    index: int,
    compressed: int,
    out_dir: Path,
    limits: Limits,
) -> Entry:
    name = info.filename
    if reason := _unsafe_member_path(name):
        error = IntakeError(
            "zip_path_traversal",
            f'"{name}" in the zip was not extracted because {reason}. '
            "Re-create the zip from a folder, without absolute or '..' paths.",
        )
        return Entry(name=name, path=None, error=error)
    if info.is_dir():
        error = IntakeError(
            "zip_folder_with_data",
            f'"{name}" in the zip is marked as a folder but holds {_bytes(info.file_size)}; it was not extracted. '
            "Re-create the zip from the files themselves.",
        )
        return Entry(name=name, path=None, error=error)
    if stat.S_ISLNK(info.external_attr >> 16):
        error = IntakeError(
            "zip_link",
            f'"{name}" in the zip is a symbolic link, not a file. Zip the file itself and upload again.',
        )
        return Entry(name=name, path=None, error=error)
    if info.file_size > limits.max_file_bytes:
        error = IntakeError(
            "too_large",
            f'"{name}" in the zip is {_bytes(info.file_size)}, '
            f"over the limit of {_bytes(limits.max_file_bytes)}. "
            "Split it into smaller files.",
        )
        return Entry(name=name, path=None, error=error)
    ratio = info.file_size / max(compressed, 1)
    if info.file_size > limits.zip_ratio_min_bytes and ratio > limits.max_zip_ratio:
        return Entry(name=name, path=None, error=_zip_bomb(name, info.file_size, compressed, limits))

    target = out_dir / _safe_name(index, name)
    if not target.resolve().is_relative_to(out_dir.resolve()):  # belt and braces: the name is flat
        raise AssertionError(f"refusing to write outside {out_dir}: {target}")
    try:
        _stream_member(zf, info, target)
    except IntakeError as exc:
        target.unlink(missing_ok=True)
        return Entry(name=name, path=None, error=exc)
    except RuntimeError as exc:  # zipfile: "File ... is encrypted, password required"
        target.unlink(missing_ok=True)
        error = IntakeError(
            "encrypted_zip",
            f'"{name}" in the zip is password-protected ({exc}). Zip it again without a password.',
        )
        return Entry(name=name, path=None, error=error)
    except FileExistsError:
        raise  # out_dir must be fresh; never touch a file this call did not write
    except (zipfile.BadZipFile, zlib.error, lzma.LZMAError, NotImplementedError, EOFError, OSError) as exc:
        target.unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.errno is not None:
            raise  # a disk or permission fault here, not a bad zip: let the caller retry
        error = IntakeError(
            "corrupt_zip",
            f'"{name}" in the zip is damaged and cannot be extracted ({exc}). '
            "Create the zip again and upload it.",
        )
        return Entry(name=name, path=None, error=error)

    with target.open("rb") as fh:
        member_head = fh.read(SNIFF_BYTES)
    if sniff_kind(member_head) == "zip" and not _office_label(target, name):
        error = IntakeError(
            "nested_zip",
            f'"{name}" is a zip inside the zip; nested zips are not opened. '
            "Upload it as its own batch, or put its files directly in the outer zip.",
        )
        return Entry(name=name, path=target, error=error)
    return Entry(name=name, path=target)


def _zip_bomb(name: str, size: int, compressed: int, limits: Limits) -> IntakeError:
    return IntakeError(
        "zip_bomb",
        f'"{name}" in the zip expands from {_bytes(compressed)} to {_bytes(size)} '
        f"(ratio {_n(size / max(compressed, 1))}:1, over the limit of {_n(limits.max_zip_ratio)}:1), "
        "like a zip bomb; it was not extracted. Zip the original documents again.",
    )


def _stream_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path) -> None:
    """Copy one member, counting the bytes actually produced: never more than its header declares.

    The declared sizes already passed the per-file, total and ratio limits, so this bound enforces all of
    them even against a reader that trusted a lying header.
    """
    allowed = info.file_size
    written = 0
    with zf.open(info) as src, target.open("xb") as dst:  # "x": never overwrite or follow a planted link
        while chunk := src.read(_CHUNK):
            written += len(chunk)
            if written > allowed:
                raise IntakeError(
                    "zip_bomb",
                    f'"{info.filename}" in the zip produces more than the {_bytes(allowed)} its header '
                    "declares; it was not extracted. Zip the original documents again.",
                )
            dst.write(chunk)
