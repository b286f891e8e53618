"""Batches through the upload page: every file is kept, bad input fails alone, pages and blocks appear."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from extraction.models import Batch, Document, Upload
from extraction.pipeline.process import document_process
from tests.support import badfiles

MiB = 1024 * 1024


def _upload(client, paths: list[Path], *, doctype="acta", engine="auto", name="batch") -> Batch:
    files = [SimpleUploadedFile(p.name, p.read_bytes()) for p in paths]
    response = client.post(
        reverse("batch_upload"), {"name": name, "doctype": doctype, "ocr_engine": engine, "files": files}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    return Batch.objects.get(name=name)


BAD_CASES = [
    (badfiles.make_empty_pdf, "empty"),
    (badfiles.make_truncated_pdf, "corrupt_pdf"),
    (badfiles.make_corrupt_pdf, "corrupt_pdf"),
    (badfiles.make_encrypted_pdf, "encrypted_pdf"),
    (badfiles.make_fake_jpg, "false_extension"),
    (badfiles.make_bomb_png, "decompression_bomb"),
    (lambda d: badfiles.make_many_pages_pdf(d, pages=12), "too_many_pages"),
    (lambda d: badfiles.make_big_bin(d, size=2 * MiB), "too_large"),
    (badfiles.make_nested_zip, "nested_zip"),
    (lambda d: badfiles.make_many_files_zip(d, count=12), "zip_too_many_files"),
    (badfiles.make_zip_bomb, "zip_bomb"),
    (badfiles.make_txt, "unsupported_type"),
]


# Small limits so the test files stay small; the zip bomb is judged by its ratio under the default limits.
SMALL_LIMITS = {"too_many_pages": ("UPLOAD_MAX_PAGES", 10), "too_large": ("UPLOAD_MAX_FILE_MB", 1),
                "zip_too_many_files": ("UPLOAD_MAX_ZIP_FILES", 10)}


@pytest.mark.parametrize(("make", "code"), BAD_CASES, ids=[c for _, c in BAD_CASES])
def test_each_bad_input_ends_in_a_clear_error_and_the_rest_of_the_batch_goes_on(
    client_as, tmp_path, settings, make, code
):
    if code in SMALL_LIMITS:
        name, value = SMALL_LIMITS[code]
        setattr(settings, name, value)
    bad = make(tmp_path)
    good = badfiles.make_pdf(tmp_path, "good.pdf", pages=1)
    batch = _upload(client_as("admin"), [bad, good])

    failed = batch.documents.filter(status="failed")
    assert code in set(failed.values_list("error_code", flat=True))
    assert all(len(d.error_message) > 20 for d in failed)  # a sentence, not a bare code
    ok = batch.documents.get(filename="good.pdf")
    assert ok.status == "queued"
    assert document_process(document_id=ok.id) in ("passed", "flagged")
    ok.refresh_from_db()
    assert ok.pages.count() == 1


def test_a_zip_whose_paths_escape_its_folder_keeps_the_good_member_and_rejects_the_others(client_as, tmp_path):
    batch = _upload(client_as("admin"), [badfiles.make_traversal_zip(tmp_path)])
    codes = sorted(batch.documents.values_list("error_code", flat=True))
    assert codes.count("zip_path_traversal") == 3  # ../evil.pdf, /abs.pdf, C:\win.pdf
    assert batch.documents.filter(status="queued").count() == 1
    for doc in batch.documents.exclude(original=""):
        assert ".." not in doc.original.name and not doc.original.name.startswith("/")


def test_every_uploaded_file_is_kept_unchanged_with_its_sha256(client_as, tmp_path):
    files = [badfiles.make_pdf(tmp_path), badfiles.make_corrupt_pdf(tmp_path), badfiles.make_zip_bomb(tmp_path)]
    batch = _upload(client_as("admin"), files)
    uploads = {u.filename: u for u in Upload.objects.filter(batch=batch)}
    assert set(uploads) == {p.name for p in files}
    for path in files:
        upload = uploads[path.name]
        stored = upload.file.read()
        assert stored == path.read_bytes()
        assert upload.sha256 == hashlib.sha256(stored).hexdigest()


def test_a_duplicate_inside_a_batch_is_marked_and_processed_once(client_as, tmp_path):
    first = badfiles.make_pdf(tmp_path, "a.pdf")
    second = tmp_path / "copy-of-a.pdf"
    second.write_bytes(first.read_bytes())
    batch = _upload(client_as("admin"), [first, second])
    original = batch.documents.get(filename="a.pdf")
    copy = batch.documents.get(filename="copy-of-a.pdf")
    assert copy.duplicate_of_id == original.id and copy.error_code == "duplicate"
    assert original.status == "queued" and copy.status != "queued"


@pytest.mark.parametrize("maker", [badfiles.make_png, badfiles.make_jpeg, badfiles.make_tiff, badfiles.make_webp])
def test_images_of_every_accepted_format_become_pages(client_as, tmp_path, maker):
    path = maker(tmp_path)
    batch = _upload(client_as("admin"), [path])
    doc = batch.documents.get()
    assert doc.status == "queued", doc.error_message
    document_process(document_id=doc.id)
    doc.refresh_from_db()
    assert doc.pages.count() == doc.page_count >= 1
    page = doc.pages.first()
    assert page.width > 0 and page.image.name.endswith(".png") and page.preview.name


def test_only_admins_may_upload(client_as):
    for role in ("reviewer", "supervisor", "outsider"):
        assert client_as(role).get(reverse("batch_upload")).status_code == 403


def test_the_ingest_command_creates_a_batch_from_a_folder(db, tmp_path, capsys):
    from django.core.management import call_command

    badfiles.make_pdf(tmp_path, "one.pdf")
    badfiles.make_png(tmp_path, "two.png")
    badfiles.make_corrupt_pdf(tmp_path)
    call_command("ingest", str(tmp_path), "--type", "acta", "--batch", "from-cli")
    batch = Batch.objects.get(name="from-cli")
    assert batch.documents.count() == 3
    assert batch.documents.filter(status="failed", error_code="corrupt_pdf").count() == 1
    assert "corrupt_pdf" in capsys.readouterr().out


def test_progress_polling_stops_when_the_batch_is_done(client_as, tmp_path):
    client = client_as("admin")
    batch = _upload(client, [badfiles.make_pdf(tmp_path)])
    url = reverse("batch_detail", args=[batch.id]) + "?partial=progress"
    running = client.get(url, headers={"HX-Request": "true"})
    assert running.status_code == 200 and b"hx-trigger" in running.content
    document_process(document_id=batch.documents.get().id)
    done = client.get(url, headers={"HX-Request": "true"})
    assert done.status_code == 286 and b"1 of 1 done" in done.content
    assert Document.objects.filter(batch=batch, status__in=["passed", "flagged"]).count() == 1


def test_a_large_batch_shows_its_documents_a_page_at_a_time_and_the_poll_keeps_to_the_page_shown(client_as):
    batch = Batch.objects.create(name="many", doctype="acta", ocr_engine="auto")
    Document.objects.bulk_create([Document(batch=batch, filename=f"doc-{i:03d}.pdf") for i in range(120)])
    client = client_as("admin")
    url = reverse("batch_detail", args=[batch.id])
    first = client.get(url).content.decode()
    assert first.count("<tr data-document=") == 50 and "doc-000.pdf" in first and "doc-050.pdf" not in first
    assert 'href="?page=2"' in first and "documents 1–50 of 120" in first
    last = client.get(url + "?page=3").content.decode()
    assert last.count("<tr data-document=") == 20 and "doc-119.pdf" in last and 'href="?page=2"' in last
    poll = client.get(url + "?partial=progress&page=2", headers={"HX-Request": "true"}).content.decode()
    assert poll.count("<tr data-document=") == 50 and "doc-050.pdf" in poll and "doc-000.pdf" not in poll
    assert "partial=progress&amp;page=2" in poll  # the next poll asks for the same page


def test_a_post_without_files_is_refused_and_creates_no_batch(client_as):
    response = client_as("admin").post(reverse("batch_upload"), {"name": "nothing", "doctype": "acta",
                                                                 "ocr_engine": "auto"})
    assert response.status_code == 200 and "This field is required" in response.content.decode()
    assert not Batch.objects.filter(name="nothing").exists()


def test_a_rejected_file_is_stored_once(client_as, tmp_path, settings):
    settings.UPLOAD_MAX_FILE_MB = 1
    big = badfiles.make_big_bin(tmp_path, size=2 * MiB)
    batch = _upload(client_as("admin"), [big, badfiles.make_pdf(tmp_path, "good.pdf")])
    rejected = batch.documents.get(filename=big.name)
    assert rejected.error_code == "too_large"
    stored = [p for p in (Path(settings.MEDIA_ROOT) / "batches" / str(batch.id)).rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in stored) == big.stat().st_size + (tmp_path / "good.pdf").stat().st_size
    assert rejected.original.read() == big.read_bytes()  # still there, once, for a retry or a download


def test_a_zip_folder_entry_that_carries_bytes_is_reported_not_dropped(client_as, tmp_path):
    import zipfile

    archive = tmp_path / "odd.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("../", b"%PDF-1.4 hidden")  # a folder named '..' with bytes in it
        zf.writestr("docs/", b"%PDF-1.4 hidden too")
        zf.writestr("empty-folder/", b"")  # a plain folder: nothing to report
        zf.writestr("good.pdf", badfiles.make_pdf(tmp_path).read_bytes())
    batch = _upload(client_as("admin"), [archive])
    found = dict(batch.documents.values_list("filename", "error_code"))
    assert found == {"..": "zip_path_traversal", "docs": "zip_folder_with_data", "good.pdf": ""}
    page = client_as("admin").get(reverse("batch_detail", args=[batch.id])).content.decode()
    assert "climbs out of the folder" in page and "marked as a folder" in page


def _multipart(files: list[tuple[str, bytes]], *, name: str) -> dict:
    """A batch upload's body as a browser sends it, file names unshortened (Django's test client cuts them to
    255 characters before sending)."""
    boundary = "proofdesk-test-boundary"
    fields = {"name": name, "doctype": "acta", "ocr_engine": "auto"}
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
             for k, v in fields.items()]
    parts += [f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{filename}"\r\n'
              f"Content-Type: application/pdf\r\n\r\n".encode() + data + b"\r\n" for filename, data in files]
    return {"data": b"".join(parts) + f"--{boundary}--\r\n".encode(),
            "content_type": f"multipart/form-data; boundary={boundary}"}


def test_file_names_too_long_for_the_parser_or_the_disk_are_kept_shortened_and_the_batch_goes_on(client_as, tmp_path):
    from django.contrib.messages import get_messages

    over_a_kilobyte = "scan-" + "x" * 1100 + ".pdf"  # its part's headers exceed Django's 1 KB
    wide = "选举结果" * 30 + ".pdf"  # 120 characters, 360 bytes: more than a file system takes for one name
    files = [(over_a_kilobyte, badfiles.make_pdf(tmp_path, "a.pdf", pages=1).read_bytes()),
             (wide, badfiles.make_pdf(tmp_path, "b.pdf", pages=2).read_bytes()),
             ("good.pdf", badfiles.make_pdf(tmp_path, "c.pdf", pages=3).read_bytes())]
    response = client_as("admin").post(reverse("batch_upload"), **_multipart(files, name="long names"))
    assert response.status_code == 302, response.content.decode()[:2000]

    batch = Batch.objects.get(name="long names")
    docs = list(batch.documents.order_by("id"))
    assert [d.status for d in docs] == ["queued"] * 3, [(d.filename, d.error_message) for d in docs]
    assert docs[0].filename.startswith("scan-xxx") and docs[1].filename.startswith("选举结果")
    assert docs[2].filename == "good.pdf"
    for doc, (_, data) in zip(docs, files, strict=True):
        assert doc.filename.endswith(".pdf") and len(doc.filename.encode()) <= 200
        assert doc.original.read() == data  # every file stored, unchanged
    said = " ".join(str(m) for m in get_messages(response.wsgi_request))
    assert "2 file names were longer than a stored file's name may be" in said
    assert docs[0].filename in said and docs[1].filename in said


def test_a_file_name_beyond_what_the_upload_reads_gets_the_upload_page_saying_why_and_creates_nothing(
        client_as, tmp_path):
    files = [("x" * 20_000 + ".pdf", badfiles.make_pdf(tmp_path).read_bytes())]
    response = client_as("admin").post(reverse("batch_upload"), **_multipart(files, name="too long"))
    page = response.content.decode()
    assert response.status_code == 400
    assert "The upload could not be read, so nothing was uploaded: the name of one of its files is over 16 KB" in page
    assert 'enctype="multipart/form-data"' in page  # the upload form again, not a bare "Bad Request (400)"
    assert not Batch.objects.filter(name="too long").exists()
