"""Intake: every bad upload gets its own specific error; good files and good zip members go on."""

from __future__ import annotations

import hashlib
import io
import time
import zipfile
from pathlib import Path

import pymupdf
import pytest
from PIL import Image, ImageFile

from extraction.pipeline.intake import (
    Entry,
    FileInfo,
    IntakeError,
    Limits,
    MiB,
    expand_upload,
    inspect_file,
    sha256_file,
    sniff_kind,
)
from tests.support import badfiles

SMALL = Limits(max_pages=5, max_zip_files=10)


def inspect(path: Path, limits: Limits = SMALL) -> FileInfo:
    return inspect_file(path=path, filename=path.name, limits=limits)


def rejection(path: Path, limits: Limits = SMALL) -> IntakeError:
    with pytest.raises(IntakeError) as caught:
        inspect(path, limits)
    return caught.value


def expand(path: Path, out_dir: Path, limits: Limits = SMALL) -> list[Entry]:
    return expand_upload(path=path, filename=path.name, out_dir=out_dir, limits=limits)


def by_name(entries: list[Entry]) -> dict[str, Entry]:
    return {entry.name: entry for entry in entries}


def files_under(root: Path) -> set[Path]:
    return {p.relative_to(root) for p in root.rglob("*") if p.is_file()}


# ---------------------------------------------------------------- sniffing and hashing


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        (b"%PDF-1.7\n", "pdf"),
        (b"\xef\xbb\xbf  \n%PDF-1.4", "pdf"),  # junk before the header is tolerated by readers
        (b"\x89PNG\r\n\x1a\n\x00\x00", "png"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "jpeg"),
        (b"II*\x00\x08\x00", "tiff"),
        (b"MM\x00*\x00\x00", "tiff"),
        (b"RIFF\x24\x00\x00\x00WEBPVP8 ", "webp"),
        (b"PK\x03\x04\x14\x00", "zip"),
        (b"GIF89a", None),
        (b"hello, world", None),
        (b"", None),
    ],
)
def test_it_names_the_type_from_magic_bytes(head: bytes, kind: str | None) -> None:
    assert sniff_kind(head) == kind


def test_it_hashes_a_file_larger_than_one_read_chunk(tmp_path: Path) -> None:
    path = tmp_path / "blob.bin"
    data = bytes(range(256)) * (5 * 4096 + 17)  # > 1 MiB, not a multiple of the chunk
    path.write_bytes(data)
    assert sha256_file(path) == hashlib.sha256(data).hexdigest()


def test_it_refuses_limits_that_are_not_positive() -> None:
    with pytest.raises(ValueError, match="max_pages"):
        Limits(max_pages=0)


# ---------------------------------------------------------------- good files


def test_it_accepts_a_pdf_with_its_page_count_size_and_hash(tmp_path: Path) -> None:
    path = badfiles.make_pdf(tmp_path, pages=2)
    info = inspect(path)
    assert info == FileInfo(
        kind="pdf",
        mime="application/pdf",
        pages=2,
        sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
        size=path.stat().st_size,
    )


@pytest.mark.parametrize(
    ("make", "mime"),
    [
        (badfiles.make_png, "image/png"),
        (badfiles.make_jpeg, "image/jpeg"),
        (badfiles.make_webp, "image/webp"),
    ],
)
def test_it_accepts_a_single_image_as_one_page(tmp_path: Path, make, mime: str) -> None:
    path = make(tmp_path)
    info = inspect(path)
    assert (info.kind, info.mime, info.pages) == ("image", mime, 1)
    assert info.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_it_counts_every_page_of_a_multi_page_tiff(tmp_path: Path) -> None:
    info = inspect(badfiles.make_tiff(tmp_path, pages=3))
    assert (info.kind, info.mime, info.pages) == ("image", "image/tiff", 3)


def test_it_accepts_a_file_without_extension_by_its_content(tmp_path: Path) -> None:
    path = badfiles.make_png(tmp_path, name="scan0001")
    assert inspect(path).mime == "image/png"


# ---------------------------------------------------------------- bad single files


def test_it_rejects_an_empty_file(tmp_path: Path) -> None:
    error = rejection(badfiles.make_empty_pdf(tmp_path))
    assert error.code == "empty"
    assert '"empty.pdf" is empty (0 bytes)' in error.message


def test_it_rejects_a_file_over_the_size_limit_with_both_sizes(tmp_path: Path) -> None:
    error = rejection(badfiles.make_big_bin(tmp_path, size=4096), Limits(max_file_bytes=1000))
    assert error.code == "too_large"
    assert "4 096 bytes, over the limit of 1 000 bytes" in error.message


def test_it_states_a_large_size_in_mebibytes(tmp_path: Path) -> None:
    error = rejection(
        badfiles.make_big_bin(tmp_path, size=3 * MiB + MiB // 2), Limits(max_file_bytes=2 * MiB)
    )
    assert "3.5 MiB, over the limit of 2 MiB" in error.message


def test_it_rejects_a_word_document_and_says_to_export_it_as_pdf(tmp_path: Path) -> None:
    error = rejection(badfiles.make_docx(tmp_path))
    assert error.code == "unsupported_type"
    assert "Word document (.docx)" in error.message
    assert "Export it as PDF" in error.message


def test_it_rejects_a_text_file_and_lists_the_accepted_types(tmp_path: Path) -> None:
    error = rejection(badfiles.make_txt(tmp_path))
    assert error.code == "unsupported_type"
    assert "plain text" in error.message
    assert "PDF, PNG, JPEG, TIFF, WebP" in error.message


def test_it_rejects_a_png_named_jpg_and_names_the_real_type(tmp_path: Path) -> None:
    error = rejection(badfiles.make_fake_jpg(tmp_path))
    assert error.code == "false_extension"
    assert "named .jpg but its content is a PNG image" in error.message
    assert "Rename it to .png" in error.message


def test_it_rejects_a_text_file_named_pdf(tmp_path: Path) -> None:
    error = rejection(badfiles.make_text_as_pdf(tmp_path))
    assert error.code == "false_extension"
    assert "named .pdf but its content is plain text, not a PDF" in error.message


def test_it_rejects_a_zip_named_pdf(tmp_path: Path) -> None:
    error = rejection(badfiles.make_zip_named_pdf(tmp_path))
    assert error.code == "false_extension"
    assert "a zip archive, not a PDF" in error.message


def test_it_rejects_a_pdf_cut_in_half(tmp_path: Path) -> None:
    error = rejection(badfiles.make_truncated_pdf(tmp_path))
    assert error.code == "corrupt_pdf"
    assert "cut off" in error.message


def test_it_rejects_a_truncated_pdf_that_mupdf_repairs_silently(tmp_path: Path) -> None:
    path = badfiles.make_truncated_pdf(tmp_path, fraction=0.8)
    with pymupdf.open(path) as doc:  # the premise: MuPDF opens it without complaint
        assert doc.is_repaired and doc.page_count == 6
    error = rejection(path)
    assert error.code == "corrupt_pdf"
    assert "without the end-of-file marker" in error.message


def test_it_rejects_garbage_after_a_pdf_header_without_leaking_the_server_path(tmp_path: Path) -> None:
    path = badfiles.make_corrupt_pdf(tmp_path)
    error = rejection(path)
    assert error.code == "corrupt_pdf"
    assert '"corrupt.pdf" is a damaged PDF' in error.message
    assert str(tmp_path) not in error.message


def test_it_names_the_page_whose_content_is_missing(tmp_path: Path) -> None:
    error = rejection(badfiles.make_damaged_page_pdf(tmp_path))
    assert error.code == "corrupt_pdf"
    assert "page 2" in error.message


def test_it_rejects_a_pdf_that_needs_a_password(tmp_path: Path) -> None:
    error = rejection(badfiles.make_encrypted_pdf(tmp_path))
    assert error.code == "encrypted_pdf"
    assert "password" in error.message


def test_it_rejects_a_pdf_over_the_page_limit(tmp_path: Path) -> None:
    error = rejection(badfiles.make_many_pages_pdf(tmp_path, pages=12))
    assert error.code == "too_many_pages"
    assert "has 12 pages, over the limit of 5 pages" in error.message


def test_it_rejects_a_tiff_over_the_page_limit(tmp_path: Path) -> None:
    error = rejection(badfiles.make_tiff(tmp_path, pages=3), Limits(max_pages=2))
    assert error.code == "too_many_pages"
    assert "more than 2 pages" in error.message


def test_it_rejects_a_pdf_page_too_large_to_render_at_the_configured_dpi(tmp_path: Path) -> None:
    error = rejection(badfiles.make_huge_page_pdf(tmp_path))
    assert error.code == "decompression_bomb"
    assert "page 1 (14 400 × 14 400 pt) rendered at 200 dpi" in error.message
    assert "40 000 × 40 000 = 1 600 000 000 px, over the limit of 60 000 000 px" in error.message


def test_it_rejects_a_png_bomb_from_its_header_without_decoding_it(tmp_path: Path, monkeypatch) -> None:
    path = badfiles.make_bomb_png(tmp_path)

    def no_decoding(self):
        raise AssertionError("pixels were decoded")

    monkeypatch.setattr(ImageFile.ImageFile, "load", no_decoding)
    monkeypatch.setattr(Image.Image, "load", no_decoding)
    started = time.perf_counter()
    error = rejection(path)
    elapsed = time.perf_counter() - started
    assert error.code == "decompression_bomb"
    assert "100 000 × 100 000 = 10 000 000 000 px, over the limit of 60 000 000 px" in error.message
    assert elapsed < 0.2


def test_it_applies_its_own_pixel_limit_below_pillows(tmp_path: Path) -> None:
    error = rejection(badfiles.make_png(tmp_path), Limits(max_pixels=1000))  # a 40 × 30 image
    assert error.code == "decompression_bomb"
    assert "40 × 30 = 1 200 px, over the limit of 1 000 px" in error.message


@pytest.mark.parametrize(
    ("make", "label"), [(badfiles.make_truncated_png, "PNG"), (badfiles.make_truncated_jpeg, "JPEG")]
)
def test_it_rejects_an_image_cut_short(tmp_path: Path, make, label: str) -> None:
    error = rejection(make(tmp_path))
    assert error.code == "corrupt_image"
    assert f"is a damaged {label} image" in error.message


# ---------------------------------------------------------------- uploads and zips


def test_it_passes_a_single_file_through_as_one_entry(tmp_path: Path) -> None:
    path = badfiles.make_pdf(tmp_path)
    assert expand(path, tmp_path / "out") == [Entry(name="good.pdf", path=path)]


def test_it_does_not_open_a_word_document_as_an_archive(tmp_path: Path) -> None:
    path = badfiles.make_docx(tmp_path)
    assert expand(path, tmp_path / "out") == [Entry(name="unsupported.docx", path=path)]


def test_it_keeps_good_members_and_flags_each_escaping_path(tmp_path: Path) -> None:
    upload = tmp_path / "upload"
    upload.mkdir()
    zip_path = badfiles.make_traversal_zip(upload)
    out_dir = tmp_path / "batch" / "out"
    before = files_under(tmp_path)

    entries = by_name(expand(zip_path, out_dir))

    assert set(entries) == {"../evil.pdf", "/abs.pdf", "C:\\win.pdf", "scans/good.png"}
    assert entries["../evil.pdf"].error.code == "zip_path_traversal"
    assert "climbs out of the folder with '..'" in entries["../evil.pdf"].error.message
    assert "path is absolute" in entries["/abs.pdf"].error.message
    assert "drive letter" in entries["C:\\win.pdf"].error.message
    assert all(entries[name].path is None for name in ("../evil.pdf", "/abs.pdf", "C:\\win.pdf"))
    good = entries["scans/good.png"]
    assert good.ok and good.path.parent == out_dir
    assert inspect_file(path=good.path, filename=good.name, limits=SMALL).mime == "image/png"
    # everything new lies inside out_dir
    assert {p for p in files_under(tmp_path) - before if p.parts[:2] != ("batch", "out")} == set()
    assert not Path("/abs.pdf").exists()


def test_it_does_not_open_a_zip_inside_the_zip(tmp_path: Path) -> None:
    entries = by_name(expand(badfiles.make_nested_zip(tmp_path), tmp_path / "out"))
    inner = entries["inner.zip"]
    assert inner.error.code == "nested_zip"
    assert '"inner.zip" is a zip inside the zip' in inner.error.message
    assert inner.path is not None and inner.path.is_file()  # kept as uploaded, not expanded
    assert entries["good.png"].ok
    assert not any(p.name.endswith("inner.pdf") for p in (tmp_path / "out").rglob("*"))


def test_it_refuses_a_whole_zip_over_the_file_count(tmp_path: Path) -> None:
    path = badfiles.make_many_files_zip(tmp_path, count=12)
    [entry] = expand(path, tmp_path / "out")
    assert (entry.name, entry.path) == ("many_files.zip", path)
    assert entry.error.code == "zip_too_many_files"
    assert "holds 12 files, over the limit of 10" in entry.error.message
    assert not (tmp_path / "out").exists()


def test_it_refuses_a_member_with_a_bomb_compression_ratio(tmp_path: Path) -> None:
    out_dir = tmp_path / "out"
    entries = by_name(expand(badfiles.make_zip_bomb(tmp_path), out_dir))
    bomb = entries["zeros.pdf"]
    assert bomb.error.code == "zip_bomb" and bomb.path is None
    assert "to 20 MiB (ratio 1 0" in bomb.error.message and "over the limit of 100:1" in bomb.error.message
    assert entries["good.png"].ok
    assert [p.name for p in out_dir.iterdir()] == ["0001_good.png"]


def test_it_measures_the_ratio_from_the_bytes_a_member_really_occupies(tmp_path: Path) -> None:
    entries = by_name(expand(badfiles.make_lying_ratio_zip(tmp_path), tmp_path / "out"))
    assert entries["zeros.pdf"].error.code == "zip_bomb"
    assert entries["good.png"].ok


def test_it_never_writes_more_than_a_member_declares(tmp_path: Path) -> None:
    out_dir = tmp_path / "out"
    [entry] = expand(badfiles.make_lying_size_zip(tmp_path, declared=1000), out_dir)
    assert entry.error is not None and entry.path is None
    assert entry.error.code in {"zip_bomb", "corrupt_zip"}
    assert list(out_dir.iterdir()) == []  # the partial file is removed


def test_it_stops_a_member_that_produces_more_than_declared_even_if_the_reader_trusts_it(
    tmp_path: Path, monkeypatch
) -> None:
    # CPython's zipfile already cuts a member at its declared size; simulate a reader that does not.
    path = badfiles.make_nested_zip(tmp_path)
    monkeypatch.setattr(zipfile.ZipFile, "open", lambda self, info, *a, **k: io.BytesIO(b"\0" * (3 * MiB)))
    out_dir = tmp_path / "out"
    entries = expand(path, out_dir)
    assert [e.error.code for e in entries] == ["zip_bomb", "zip_bomb"]
    assert "produces more than the" in entries[0].error.message
    assert list(out_dir.iterdir()) == []


def test_it_refuses_a_whole_zip_that_expands_past_the_total_limit(tmp_path: Path) -> None:
    path = badfiles.make_big_total_zip(tmp_path, members=3, size=2 * MiB)
    [entry] = expand(path, tmp_path / "out", Limits(max_zip_total_bytes=5 * MiB))
    assert entry.error.code == "zip_bomb"
    assert "would expand to 6 MiB, over the limit of 5 MiB" in entry.error.message


def test_it_refuses_a_zip_file_itself_over_the_total_limit(tmp_path: Path) -> None:
    path = badfiles.make_big_total_zip(tmp_path, members=3, size=2 * MiB)
    [entry] = expand(path, tmp_path / "out", Limits(max_zip_total_bytes=2 * MiB))
    assert entry.error.code == "too_large"
    assert "over the limit of 2 MiB" in entry.error.message


def test_it_refuses_a_member_over_the_file_size_limit(tmp_path: Path) -> None:
    entries = expand(badfiles.make_mixed_zip(tmp_path), tmp_path / "out", Limits(max_file_bytes=1000))
    too_big = [e for e in entries if e.error and e.error.code == "too_large"]
    assert [e.name for e in too_big] == ["batch/invoice.pdf"]
    assert "over the limit of 1 000 bytes" in too_big[0].error.message


def test_it_expands_good_members_skips_junk_and_flags_only_the_bad_ones(tmp_path: Path) -> None:
    out_dir = tmp_path / "out"
    entries = expand(badfiles.make_mixed_zip(tmp_path), out_dir)

    assert [e.name for e in entries] == [
        "batch/invoice.pdf",
        "batch/photo.png",
        "../../escape.jpg",
        "batch/photo2.jpg",
        "batch/empty.pdf",
    ]  # zip order; the folder, __MACOSX/, ._ files and .DS_Store are skipped
    verdicts = {}
    for entry in entries:
        if entry.error:
            verdicts[entry.name] = entry.error.code
            continue
        try:
            verdicts[entry.name] = inspect_file(path=entry.path, filename=entry.name, limits=SMALL).mime
        except IntakeError as exc:
            verdicts[entry.name] = exc.code
    assert verdicts == {
        "batch/invoice.pdf": "application/pdf",
        "batch/photo.png": "image/png",
        "../../escape.jpg": "zip_path_traversal",
        "batch/photo2.jpg": "image/jpeg",
        "batch/empty.pdf": "empty",
    }


def test_it_extracts_members_byte_for_byte(tmp_path: Path) -> None:
    path = badfiles.make_mixed_zip(tmp_path)
    entries = [e for e in expand(path, tmp_path / "out") if e.ok]
    with zipfile.ZipFile(path) as zf:
        for entry in entries:
            assert entry.path.read_bytes() == zf.read(entry.name)


def test_it_keeps_members_that_share_a_name_apart(tmp_path: Path) -> None:
    entries = expand(badfiles.make_same_name_zip(tmp_path), tmp_path / "out")
    assert [e.path.name for e in entries] == ["0001_scan.png", "0002_scan.png"]
    assert entries[0].path.read_bytes() != entries[1].path.read_bytes()


def test_it_names_extracted_files_the_same_way_every_time(tmp_path: Path) -> None:
    path = badfiles.make_mixed_zip(tmp_path)
    first = [(e.name, e.path and e.path.name) for e in expand(path, tmp_path / "a")]
    second = [(e.name, e.path and e.path.name) for e in expand(path, tmp_path / "b")]
    assert first == second


def test_it_refuses_a_zip_with_no_files(tmp_path: Path) -> None:
    [entry] = expand(badfiles.make_empty_zip(tmp_path), tmp_path / "out")
    assert entry.error.code == "empty"
    assert 'The zip "empty.zip" contains no files' in entry.error.message


def test_it_refuses_a_damaged_zip_as_a_whole(tmp_path: Path) -> None:
    path = tmp_path / "broken.zip"
    path.write_bytes(b"PK\x03\x04" + b"\x00" * 200)
    [entry] = expand(path, tmp_path / "out")
    assert entry.error.code == "corrupt_zip"
    assert 'The zip "broken.zip" is damaged' in entry.error.message


def test_it_flags_a_password_protected_member(tmp_path: Path) -> None:
    entries = by_name(expand(badfiles.make_encrypted_member_zip(tmp_path), tmp_path / "out"))
    assert entries["secret.png"].error.code == "encrypted_zip"
    assert "password" in entries["secret.png"].error.message
    assert entries["good.png"].ok


def test_it_flags_a_symbolic_link_member_without_creating_a_link(tmp_path: Path) -> None:
    out_dir = tmp_path / "out"
    entries = by_name(expand(badfiles.make_symlink_member_zip(tmp_path), out_dir))
    assert entries["link.pdf"].error.code == "zip_link"
    assert entries["good.png"].ok
    assert not any(p.is_symlink() for p in out_dir.iterdir())


def test_it_flags_a_member_whose_compressed_data_is_damaged(tmp_path: Path) -> None:
    out_dir = tmp_path / "out"
    entries = by_name(expand(badfiles.make_damaged_member_zip(tmp_path), out_dir))
    assert entries["scan.pdf"].error.code == "corrupt_zip"
    assert '"scan.pdf" in the zip is damaged' in entries["scan.pdf"].error.message
    assert entries["good.png"].ok
    assert [p.name for p in out_dir.iterdir()] == ["0002_good.png"]


def test_it_will_not_extract_into_a_folder_that_already_holds_files(tmp_path: Path) -> None:
    path = badfiles.make_same_name_zip(tmp_path)
    out_dir = tmp_path / "out"
    first = expand(path, out_dir)
    with pytest.raises(ValueError, match="new or empty folder"):
        expand(path, out_dir)
    assert all(entry.path.is_file() for entry in first)
