"""Proofdesk from another system, through the API and a webhook only: upload a batch, hear `batch.finished`,
fetch every document's fields with their proofs, then correct and verify a flagged one.

Before running it, in the app:
  - a user with the admin role (or an admin and a reviewer) makes an API token on "API tokens";
  - an admin registers a webhook endpoint on "Webhooks" for `batch.finished`, at the address this script
    listens on (`--listen`; a private address needs WEBHOOK_ALLOW_PRIVATE_URLS=true on the server), and copies
    its secret.

    PROOFDESK_URL=http://127.0.0.1:8000 PROOFDESK_TOKEN=pd_... WEBHOOK_SECRET=whsec_... \
      python docs/api_walkthrough.py --listen 127.0.0.1:8765 --doctype acta \
        --correct 'rows[0].votes=12' sheet1.pdf sheet2.png

REVIEWER_TOKEN, when set, is used for the review (claim, correct, verify); PROOFDESK_TOKEN otherwise.
Needs Python 3.11 and the `standardwebhooks` package (to check the webhook's signature); nothing else.
Exit status 0 when the batch finished and, if a document was flagged, one was corrected and verified.
"""

from __future__ import annotations

import argparse
import json
import mimetypes
import os
import sys
import threading
import urllib.error
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlencode

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


class Api:
    """JSON over HTTP with a bearer token; a problem (RFC 9457) is raised with its detail."""

    def __init__(self, base: str, token: str) -> None:
        if not base.startswith(("http://", "https://")):
            raise SystemExit(f"PROOFDESK_URL is an http(s) address, not {base!r}")
        self.base, self.token = base.rstrip("/") + "/api/v1", token

    def call(self, method: str, path: str, *, json_body: dict | None = None, body: bytes | None = None,
             headers: dict[str, str] | None = None) -> dict:
        sent = {"Authorization": f"Bearer {self.token}", "Accept": "application/json", **(headers or {})}
        if json_body is not None:
            body, sent["Content-Type"] = json.dumps(json_body).encode(), "application/json"
        request = urllib.request.Request(self.base + path, data=body, method=method, headers=sent)  # noqa: S310
        try:
            with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 - http(s) only, checked above
                return json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as err:
            problem = json.loads(err.read() or b"{}")
            raise SystemExit(f"{method} {path}: {err.code} {problem.get('detail', problem)}") from None

    def upload(self, *, name: str, doctype: str, files: list[Path], key: str) -> dict:
        """POST /batches as multipart/form-data; the Idempotency-Key makes a retry create nothing twice."""
        boundary = uuid.uuid4().hex
        parts = []
        for field, value in (("name", name), ("doctype", doctype)):
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"\r\n\r\n{value}\r\n'.encode())
        for path in files:
            kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{path.name}"\r\n'
                         f"Content-Type: {kind}\r\n\r\n".encode() + path.read_bytes() + b"\r\n")
        parts.append(f"--{boundary}--\r\n".encode())
        return self.call("POST", "/batches", body=b"".join(parts), headers={
            "Content-Type": f"multipart/form-data; boundary={boundary}", "Idempotency-Key": key})


class Receiver(ThreadingHTTPServer):
    """Takes signed webhook deliveries; keeps each event once by its id (a retried delivery repeats the id)."""

    def __init__(self, address: tuple[str, int], secret: str) -> None:
        super().__init__(address, _Handler)
        self.webhook, self.events, self.changed = Webhook(secret), {}, threading.Condition()

    def wait_for(self, predicate, timeout: float) -> dict | None:
        with self.changed:
            self.changed.wait_for(lambda: next((e for e in self.events.values() if predicate(e)), None), timeout)
            return next((e for e in self.events.values() if predicate(e)), None)


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            event = self.server.webhook.verify(body, dict(self.headers))
        except WebhookVerificationError:
            self.send_response(400)  # not from our Proofdesk, or altered on the way
            self.end_headers()
            return
        with self.server.changed:
            self.server.events.setdefault(self.headers["webhook-id"], event)
            self.server.changed.notify_all()
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def documents_of(api: Api, batch_id: int) -> list[dict]:
    """Every document of the batch, following the cursor to the last page."""
    found, cursor = [], None
    while True:
        query = {"batch": batch_id, "limit": 50, **({"cursor": cursor} if cursor else {})}
        page = api.call("GET", f"/documents?{urlencode(query)}")
        found += page["items"]
        cursor = page["next_cursor"]
        if not cursor:
            return found


def show(result: dict) -> None:
    print(f"  document {result['id']} {result['filename']}: {result['status']}"
          f" ({result['run']['stop_reason'] if result['run'] else 'no run'})")
    for field in result["fields"]:
        proofs = "; ".join(f"p{p['page']} \"{p['words']}\"" for p in field["proofs"]) or "no proof"
        print(f"    {field['label']} = {field['value']!r}  [{proofs}]")
    for rule in result["broken_rules"]:
        print(f"    broken: {rule['message']} (fields: {', '.join(rule['field_labels'])})")


def review(api: Api, document_id: int, corrections: list[tuple[str, str]]) -> dict:
    """Claim the document, correct the fields, verify it (with a note, which a rule still broken asks for)."""
    version = api.call("POST", f"/documents/{document_id}/claim")["version"]
    for path, value in corrections:
        version = api.call("POST", f"/documents/{document_id}/fields",
                           json_body={"field": path, "value": value, "version": version})["version"]
    return api.call("POST", f"/documents/{document_id}/verify",
                    json_body={"version": version, "note": "corrected through the API"})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--doctype", required=True)
    parser.add_argument("--listen", default="127.0.0.1:8765", help="host:port of the webhook receiver")
    parser.add_argument("--correct", action="append", default=[], metavar="FIELD=VALUE",
                        help="a correction for the first flagged document (repeatable)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds to wait for batch.finished")
    args = parser.parse_args()
    corrections = [tuple(c.split("=", 1)) for c in args.correct]
    admin = Api(os.environ["PROOFDESK_URL"], os.environ["PROOFDESK_TOKEN"])
    reviewer = Api(os.environ["PROOFDESK_URL"], os.environ.get("REVIEWER_TOKEN") or os.environ["PROOFDESK_TOKEN"])
    host, port = args.listen.rsplit(":", 1)
    receiver = Receiver((host, int(port)), os.environ["WEBHOOK_SECRET"])
    threading.Thread(target=receiver.serve_forever, daemon=True).start()

    batch = admin.upload(name="api walkthrough", doctype=args.doctype, files=args.files, key=str(uuid.uuid4()))
    print(f"batch {batch['id']}: {batch['progress']['total']} document(s) queued")
    finished = receiver.wait_for(lambda e: e["type"] == "batch.finished" and e["data"]["batch"]["id"] == batch["id"],
                                 args.timeout)
    if finished is None:
        print(f"no batch.finished for batch {batch['id']} within {args.timeout:.0f} s", file=sys.stderr)
        return 1
    print(f"batch.finished: {json.dumps(finished['data']['batch'])}")

    flagged = None
    for summary in documents_of(admin, batch["id"]):
        result = admin.call("GET", f"/documents/{summary['id']}")
        show(result)
        if flagged is None and result["status"] == "flagged" and result["review_status"] != "verified":
            flagged = result
    if flagged is not None:
        decided = review(reviewer, flagged["id"], corrections)
        print(f"document {flagged['id']}: corrected {len(corrections)} field(s), now {decided['review_status']}")
    receiver.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
