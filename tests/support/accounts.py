"""The test users' password: every role's account is made with it (conftest's `users`)."""

PASSWORD = "correct-horse-battery-9"
