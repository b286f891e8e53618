import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewer.settings")
os.environ.setdefault("PROOFDESK_PROCESS", "web")  # calls outside are bounded as a request needs (settings.py)
application = get_wsgi_application()
