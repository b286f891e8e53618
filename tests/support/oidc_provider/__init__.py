"""A real OpenID Connect provider for the tests: a small Django project on django-oidc-provider, run as a process
of its own (serve.py) on a free loopback port, with its own SQLite database in a temporary folder.

- process.py starts and stops it and drives it through its control endpoint (views.py): clients, people with
  passwords and groups, and the one way it can be told to misbehave (an ID token for another audience).
- claims.py puts the person's groups in the ID token (`groups`: ["north:reviewer", ...]) and their name and
  address in the standard claims; a provider started with IDP_FORGED_KID signs with its own key under another
  provider's key id, as a forger would.
- signin.py walks the authorization-code flow over HTTP without a browser (the browser test clicks through it);
  app_urls.py is the app's URLconf as a process started with OIDC_ISSUER builds it.
"""
