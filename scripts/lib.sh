# Shared helpers for the make targets.
as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "need root to run: $*" >&2; return 1; fi
}

apt_install() {
  # apt-get update once per run, then install what is missing.
  if [ -z "${_APT_UPDATED:-}" ]; then as_root apt-get update -qq || true; _APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}
