"""The three roles are Django groups, created by a migration."""

ADMIN = "admin"
REVIEWER = "reviewer"
SUPERVISOR = "supervisor"
ROLES = (ADMIN, REVIEWER, SUPERVISOR)

# Where each role lands after login, by priority when a user holds several.
START_PAGES = ((ADMIN, "batch_list"), (REVIEWER, "queue"), (SUPERVISOR, "audit_home"))
