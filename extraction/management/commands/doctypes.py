"""Document types as YAML files, so that teams keep them in git.

    python manage.py doctypes export NAME [--version N] [-o FILE]   # a defined or shipped type's definition
    python manage.py doctypes import FILE [--user NAME]             # saved as the type's next version
    python manage.py doctypes list
"""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from extraction.doctypes.defined.check import DefinitionError, spec_parse, spec_warnings
from extraction.doctypes.defined.files import MAX_FILE, spec_from_yaml, spec_to_yaml
from extraction.doctypes.registry import UnknownDocumentType, all_doctypes, get_doctype
from extraction.doctypes.selectors import doctype_live_versions, doctype_version_get
from extraction.doctypes.services import doctype_version_save


class Command(BaseCommand):
    help = "Export a document type's definition as YAML, import one as a new version, or list them."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        export = sub.add_parser("export", help="print (or write) a type's definition as YAML")
        export.add_argument("name")
        export.add_argument("--version", type=int, default=None, help="a saved version (default: the newest)")
        export.add_argument("-o", "--output", type=Path, default=None, help="write here instead of printing")
        imported = sub.add_parser("import", help="save a YAML definition as its type's next version")
        imported.add_argument("file", type=Path)
        imported.add_argument("--user", default=None, help="the account the version is saved by")
        sub.add_parser("list", help="every type: defined ones with their newest version")

    def handle(self, *args, action: str, **options):
        if action == "export":
            text = spec_to_yaml(self._spec(options["name"], options["version"]))
            if options["output"]:
                options["output"].write_text(text, encoding="utf-8")
                self.stderr.write(f"wrote {options['output']}")
            else:
                self.stdout.write(text, ending="")
        elif action == "import":
            self._import(options["file"], options["user"])
        else:
            for v in doctype_live_versions():
                self.stdout.write(f"{v.name}\tv{v.version}\t{v.label}\tdefined")
            for d in all_doctypes():
                self.stdout.write(f"{d.name}\t-\t{d.label}\t{'shipped definition' if d.definition else 'code'}")

    def _spec(self, name: str, version: int | None):
        saved = doctype_version_get(name=name, version=version)
        if saved is not None:
            return spec_parse(saved.definition)
        try:
            doctype = get_doctype(name)
        except UnknownDocumentType as err:
            raise CommandError(str(err)) from None
        if doctype.definition is None:
            raise CommandError(f"{name!r} is written in Python (extraction/doctypes/), not as a definition")
        if version is not None:
            raise CommandError(f"{name!r} is shipped with the code and has no saved versions")
        return doctype.definition

    def _import(self, path: Path, username: str | None) -> None:
        if not path.is_file():
            raise CommandError(f"no such file: {path}")
        if path.stat().st_size > MAX_FILE * 4:
            raise CommandError(f"{path} is too large for a definition")
        user = None
        if username:
            user = get_user_model().objects.filter(username=username).first()
            if user is None:
                raise CommandError(f"no such user: {username}")
        try:
            spec = spec_from_yaml(path.read_text(encoding="utf-8"))
            version, created = doctype_version_save(data=spec.as_data(), user=user)
        except DefinitionError as err:
            raise CommandError(f"{path} cannot be imported:\n- " + "\n- ".join(err.problems)) from None
        except UnicodeDecodeError as err:
            raise CommandError(f"{path} cannot be imported: it is not UTF-8 text ({err.reason} at byte "
                               f"{err.start})") from None
        self.stdout.write(f"{version.name} v{version.version}: {'saved' if created else 'unchanged, nothing saved'}")
        for warning in spec_warnings(spec):
            self.stderr.write(f"warning: {warning}")
