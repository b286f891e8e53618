"""Run the test provider: `python -m tests.support.oidc_provider.serve` with IDP_DATA_DIR and IDP_CONTROL_TOKEN.

Makes its database and an RSA key, listens on a free loopback port (IDP_PORT, or one the system picks) and
writes the port to IDP_DATA_DIR/port once it accepts connections, for process.py to read."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path


def main() -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.support.oidc_provider.settings"
    import django

    django.setup()
    from django.core.management import call_command
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
    from django.core.wsgi import get_wsgi_application

    from tests.support.oidc_provider.claims import forge_key_id

    call_command("migrate", verbosity=0, interactive=False)
    call_command("creatersakey", stdout=sys.stderr)
    forge_key_id()
    server = ThreadedWSGIServer(("127.0.0.1", int(os.environ.get("IDP_PORT", "0"))), WSGIRequestHandler)
    server.set_app(get_wsgi_application())
    data_dir = Path(os.environ["IDP_DATA_DIR"])
    (data_dir / "port.tmp").write_text(str(server.server_address[1]))
    (data_dir / "port.tmp").rename(data_dir / "port")
    threading.Thread(target=_exit_with_the_parent, args=(os.getppid(),), daemon=True).start()
    server.serve_forever()


def _exit_with_the_parent(parent: int) -> None:
    """A test run that dies without stopping the provider (killed, a crash) does not leave it behind."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


if __name__ == "__main__":
    main()
