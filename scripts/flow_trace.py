"""How often one document's calls cross the project's modules and packages (issue 41), before and after a restructuring.

Usage: .venv/bin/python scripts/flow_trace.py [--offline] [-v | -vv]

On a throwaway SQLite database, the bundled sample acta-102 (a row's digits and words disagree, so it ends FLAGGED
and can be edited), read by the pdf-text engine, goes through three flows:
  upload to desk   an admin POSTs the file to the upload page, whose commit runs the Celery task eagerly (what a
                   worker runs: CELERY_TASK_ALWAYS_EAGER); then a reviewer GETs the document's desk page
  extraction_run   the part of the flow above inside extraction_run (the validation loop and its writes)
  desk edit        the reviewer POSTs one field edit on the desk (as htmx does), which re-runs the rules
The reader is a scripted model on a loopback server (tests/support/llm_server.py, tests/support/acta_models.py's "right" model:
prompt, rounds, feedback), else (--offline, or those cannot be imported) the acta's template reader; the first line
printed names it. An untraced first pass imports every module and fills every cache; the second pass is traced.

sys.setprofile sees the main thread's Python calls and returns (not the lease or OCR threads); only frames whose code
is in extraction/ or reviewer/ (not migrations) count. The *current module* is the module of the running project
frame: a call makes the callee's module current, a return the module of the nearest project frame below (the
caller's, library frames skipped; with none left, it stays). Over time this is a sequence of modules, with
consecutive repeats merged, in which
  stops   = its length: every entry into a module, by a call or by a return to the caller, the first one included
  modules = the distinct modules in it
  returns = entries into a module visited before, at any time (= stops - modules)
(as in the earlier reading "108 stops in 35 modules with 73 returns to a module already left"). Two sequences:
  once    each function followed once, at its first call (a later call is skipped, yet a function it is the first
          to call is followed): the walk of a reader following the code
  every   every call and return: loops over pages, blocks and fields multiply it
The same at package granularity, a module's package being the folder holding it (extraction/loop.py: extraction,
extraction/ocr/layout.py: extraction.ocr, reviewer/views/desk.py: reviewer.views).

Project code is reached only through stable entry points (URL names, the Celery app in eager mode, models by app
label); extraction_run is looked up under a few module paths, then in every loaded project module.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import sys
import tempfile
from contextlib import contextmanager, nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SAMPLE = ROOT / "samples" / "actas" / "acta-102-digits-words-mismatch.pdf"
SAMPLE_SEED, SAMPLE_ERRORS = 102, ["digits_words_mismatch"]  # as scripts/make_samples.py wrote it
PACKAGES = ("extraction", "reviewer")
EXTRACTION_RUN = ["extraction.services.extract", "extraction.pipeline.extract", "extraction.pipeline.run",
                  "extraction.pipeline", "extraction.extract", "extraction.run"]


class Tracer:
    """Records the current project module over time: at every change (`every`), and in the reading that follows
    each function once (`once`). With `within` (a code object), only while a call of that code runs."""

    def __init__(self, within=None):
        self.within, self.done = within, False
        self.stack: list[tuple[object, str, bool]] = []  # the running project frames: (frame, module, followed)
        self.seen: set[object] = set()
        self.every: list[str] = []  # the sequences of modules
        self.once: list[str] = []
        self._names: dict[object, str | None] = {}

    def module_of(self, code) -> str | None:
        if code not in self._names:
            name = None
            path = Path(code.co_filename)
            if path.is_absolute() and path.suffix == ".py" and path.is_relative_to(ROOT):
                parts = path.relative_to(ROOT).with_suffix("").parts
                if parts[0] in PACKAGES and "migrations" not in parts:
                    name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            self._names[code] = name
        return self._names[code]

    def __call__(self, frame, event, arg) -> None:
        if event not in ("call", "return") or self.done:
            return
        module = self.module_of(frame.f_code)
        if module is None:
            return
        if event == "call":
            if self.within is not None and not self.stack and frame.f_code is not self.within:
                return
            followed = frame.f_code not in self.seen
            self.seen.add(frame.f_code)
            self.stack.append((frame, module, followed))
            enter(self.every, module)
            if followed:
                enter(self.once, module)
            return
        if not self.stack or self.stack[-1][0] is not frame:
            return  # a frame that started before this tracer looked (only with `within`)
        _, _, followed = self.stack.pop()
        if self.stack:
            enter(self.every, self.stack[-1][1])
        caller = next((m for _, m, kept in reversed(self.stack) if kept), None)
        if followed and caller is not None:
            enter(self.once, caller)
        self.done = self.within is not None and not self.stack


def enter(seq: list[str], module: str) -> None:
    if not seq or seq[-1] != module:
        seq.append(module)


def package_of(module: str) -> str:
    path = Path(*module.split("."))
    is_package = (ROOT / path / "__init__.py").exists()
    return module if is_package else ".".join(path.parent.parts)


def packages_of(seq: list[str]) -> list[str]:
    return [p for i, p in enumerate(map(package_of, seq)) if i == 0 or package_of(seq[i - 1]) != p]


def figures(seq: list[str]) -> tuple[int, int, int]:
    """(distinct, stops, returns to one visited before) of a sequence without consecutive repeats."""
    return len(set(seq)), len(seq), len(seq) - len(set(seq))


def setup(tmp: Path, offline: bool):
    """Environment first, then Django on SQLite in `tmp`, migrated; the scripted LLM server when it can be had."""
    for name in [n for n in os.environ if n.startswith(("LLM_", "AWS_", "CELERY_"))] + [
            "DATABASE_URL", "CACHE_URL", "MEDIA_ROOT", "STORAGE_BACKEND", "DJANGO_SETTINGS_MODULE"]:
        os.environ.pop(name, None)
    os.environ.update(PROOFDESK_VAR_DIR=str(tmp), DATABASE_URL=f"sqlite:///{tmp / 'db.sqlite3'}",
                      CELERY_TASK_ALWAYS_EAGER="1", OCR_ENGINE="pdf-text", OCR_SECOND_ENGINE="", DJANGO_DEBUG="0",
                      PROOFDESK_ENV="development", LOG_LEVEL="ERROR", OMP_THREAD_LIMIT="1",
                      DJANGO_SETTINGS_MODULE="reviewer.settings")
    server = None
    if not offline:
        try:
            from sheetgen.generate import generate_acta
            from tests.support.acta_models import ActaModel
            from tests.support.llm_server import ScriptedLLMServer

            printed = generate_acta(seed=SAMPLE_SEED, errors=SAMPLE_ERRORS).printed
            server = ScriptedLLMServer().start()
            server.models = []  # one fresh model per document: it keeps its rounds
            server.always(lambda body: server.models[-1].step(body))
            server.new_model = lambda: server.models.append(ActaModel("right", printed, seed=SAMPLE_SEED))
            os.environ.update(LLM_BASE_URL=server.base_url, LLM_MODEL="scripted", LLM_MAX_RETRIES="0",
                              LLM_TIMEOUT="30", LLM_INPUT="text")
        except ImportError as exc:
            print(f"(no scripted LLM: {exc}; the template reader reads offline)", file=sys.stderr)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)
    return server


def find_extraction_run():
    """extraction_run's code object: under a known module path, else in any loaded project module."""
    for path in EXTRACTION_RUN:
        try:
            importlib.import_module(path)
        except ImportError:
            continue
    for name, module in [(p, sys.modules.get(p)) for p in EXTRACTION_RUN] + list(sys.modules.items()):
        func = getattr(module, "extraction_run", None)
        if name.split(".")[0] in PACKAGES and inspect.isfunction(func):
            return inspect.unwrap(func).__code__
    sys.exit(f"flow_trace: no extraction_run found (tried {EXTRACTION_RUN} and every loaded project module)")


def users():
    from django.contrib.auth.models import Group, User

    made = {}
    for role in ("admin", "reviewer"):
        user = User.objects.create_user(username=f"trace-{role}")  # no password: the client logs in by force
        user.groups.add(Group.objects.get_or_create(name=role)[0])
        made[role] = user
    return made


@contextmanager
def tracing(*tracers: Tracer):
    sys.setprofile(lambda frame, event, arg: [t(frame, event, arg) for t in tracers])
    try:
        yield
    finally:
        sys.setprofile(None)


def run_flows(accounts, server, tracers: dict[str, Tracer] | None = None) -> str:
    """Upload, process and open one document; edit one of its fields. Traced with `tracers` (flow -> Tracer)."""
    from django.apps import apps
    from django.test import Client
    from django.urls import reverse

    def traced(*flows):
        return tracing(*(tracers[f] for f in flows)) if tracers else nullcontext()

    Document, Extraction, FieldValue, Round = (apps.get_model("extraction", m)
                                               for m in ("Document", "Extraction", "FieldValue", "Round"))
    admin, reviewer = Client(), Client()
    admin.force_login(accounts["admin"])
    reviewer.force_login(accounts["reviewer"])
    if server is not None:
        server.new_model()
    last = Document.objects.order_by("-id").values_list("id", flat=True).first() or 0
    with SAMPLE.open("rb") as file, traced("upload to desk", "extraction_run"):
        upload = admin.post(reverse("batch_upload"), {"name": "flow trace", "doctype": "acta",
                                                      "ocr_engine": "pdf-text", "files": file})
    document = Document.objects.filter(id__gt=last).get()
    with traced("upload to desk"):
        desk = reviewer.get(reverse("desk_document", args=[document.id]))
    if upload.status_code != 302 or desk.status_code != 200 or document.status != "flagged":
        sys.exit(f"flow_trace: upload {upload.status_code}, desk {desk.status_code}, document {document.status} "
                 f"({document.error_code}: {document.error_message}); wanted 302, 200 and flagged")
    extraction = Extraction.objects.filter(document=document).order_by("-id").first()
    version = document.version
    field = next(f for f in FieldValue.objects.filter(extraction=extraction).order_by("position")
                 if type(f.value) is int)
    with traced("desk edit"):
        edit = reviewer.post(reverse("desk_edit", args=[document.id]), HTTP_HX_REQUEST="true",
                             data={"field": field.path, "value": str(field.value + 1), "version": version})
    document.refresh_from_db()
    if edit.status_code != 200 or document.version != version + 1:
        sys.exit(f"flow_trace: the desk edit answered {edit.status_code}, version {document.version}")
    rounds = Round.objects.filter(extraction=extraction).count()
    return f"document {document.id}: {extraction.reader} reader, {rounds} round(s), edited {field.path}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--offline", action="store_true", help="the template reader, no scripted LLM")
    parser.add_argument("--verbose", "-v", action="count", default=0,
                        help="print each flow's packages as each function is followed once (-vv: its modules)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="proofdesk-trace-") as tmp:
        server = setup(Path(tmp), args.offline)
        try:
            accounts = users()
            run_flows(accounts, server)  # warm-up: imports and caches
            tracers = {"upload to desk": Tracer(), "extraction_run": Tracer(within=find_extraction_run()),
                       "desk edit": Tracer()}
            print(run_flows(accounts, server, tracers))
        finally:
            if server is not None:
                server.stop()
    if not tracers["extraction_run"].done:
        sys.exit("flow_trace: extraction_run was not seen running to its end in the upload flow")
    header = ("flow", "modules", "stops", "returns", "packages", "pkg stops", "pkg returns")
    for title, kind in (("Each function followed once, at its first call", "once"),
                        ("Every call and return", "every")):
        print(f"\n{title}:\n{header[0]:<16}" + "".join(f"{h:>12}" for h in header[1:]))
        for flow, tracer in tracers.items():
            seq = getattr(tracer, kind)
            print(f"{flow:<16}" + "".join(f"{n:>12}" for n in figures(seq) + figures(packages_of(seq))))
    for flow, tracer in tracers.items():
        if args.verbose:
            print(f"\n{flow}, packages:\n  " + " > ".join(packages_of(tracer.once)))
        if args.verbose > 1:
            print(f"{flow}, modules:\n  " + " > ".join(tracer.once))


if __name__ == "__main__":
    main()
