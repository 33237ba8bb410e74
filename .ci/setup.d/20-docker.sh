#!/usr/bin/env bash
# Sandbox set-up for CI: a running Docker engine, bubblewrap, and the co-tui-sandbox image.
# Idempotent: each step is skipped when its result is already there. Runs as root on Debian
# bookworm with no image registry: the base image is built locally with debootstrap.
set -euo pipefail
cd "$(dirname "$0")/../.."

IMAGE="${CO_TUI_SANDBOX_IMAGE:-co-tui-sandbox}"
BASE_IMAGE="co-debian-base:bookworm"
HASH_LABEL="co-tui.dockerfile-sha256"
DOCKERD_LOG="${DOCKERD_LOG:-/var/log/co-tui-dockerd.log}"
SOCKET_WAIT="${DOCKERD_WAIT:-60}"

say() { printf '  [sandbox] %s\n' "$*"; }

# --- packages -----------------------------------------------------------------------
missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v bwrap >/dev/null || missing+=(bubblewrap)
command -v debootstrap >/dev/null || missing+=(debootstrap)
if ((${#missing[@]})); then
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
else
  say "docker.io, bubblewrap and debootstrap already installed"
fi

# --- engine -------------------------------------------------------------------------
if docker info >/dev/null 2>&1; then
  say "a Docker engine already answers"
else
  say "starting dockerd (log: $DOCKERD_LOG)"
  nohup dockerd >"$DOCKERD_LOG" 2>&1 &
  dockerd_pid=$!
  for ((i = 0; i < SOCKET_WAIT * 2; i++)); do
    if [ -S /var/run/docker.sock ] && docker info >/dev/null 2>&1; then break; fi
    if ! kill -0 "$dockerd_pid" 2>/dev/null; then break; fi
    sleep 0.5
  done
  if ! docker info >/dev/null 2>&1; then
    say "dockerd did not answer within ${SOCKET_WAIT}s; diagnostics follow" >&2
    kill -0 "$dockerd_pid" 2>/dev/null && say "dockerd (pid $dockerd_pid) is running" >&2 \
      || say "dockerd exited" >&2
    ls -l /var/run/docker.sock >&2 || true
    tail -n 40 "$DOCKERD_LOG" >&2 || true
    exit 1
  fi
  say "dockerd answers: $(docker version --format '{{.Server.Version}}')"
fi

# --- the sandbox image ----------------------------------------------------------------
dockerfile_hash="$(sha256sum sandbox/Dockerfile | cut -d' ' -f1)"
current_hash="$(docker image inspect --format "{{ index .Config.Labels \"$HASH_LABEL\" }}" \
  "$IMAGE" 2>/dev/null || true)"
if [ "$current_hash" = "$dockerfile_hash" ]; then
  say "image $IMAGE is up to date with sandbox/Dockerfile"
  exit 0
fi

apt_mirror() {
  # The Debian mirror apt itself uses (one-line .list format or deb822 .sources format).
  local files=(/etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources)
  local url
  url="$(cat "${files[@]}" 2>/dev/null \
    | sed -nE 's/^[[:space:]]*(deb[[:space:]]+(\[[^]]*\][[:space:]]+)?|URIs:[[:space:]]*)([a-z]+:\/\/[^[:space:]]+).*/\3/p' \
    | grep -v -e security -e updates | grep '/debian' | head -n1 || true)"
  echo "${url:-http://deb.debian.org/debian}"
}

if docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
  say "base image $BASE_IMAGE already present"
else
  mirror="$(apt_mirror)"
  rootfs="$(mktemp -d /tmp/co-debian-rootfs.XXXXXX)"
  trap 'rm -rf "$rootfs"' EXIT
  say "debootstrap --variant=minbase bookworm from $mirror (about a minute)"
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >/tmp/co-debootstrap.log 2>&1 || {
    tail -n 30 /tmp/co-debootstrap.log >&2
    exit 1
  }
  say "importing $BASE_IMAGE"
  tar -C "$rootfs" -c . | docker import - "$BASE_IMAGE" >/dev/null
  rm -rf "$rootfs"
  trap - EXIT
fi

say "building $IMAGE from sandbox/Dockerfile (FROM $BASE_IMAGE)"
docker build --build-arg "BASE=$BASE_IMAGE" --label "$HASH_LABEL=$dockerfile_hash" \
  -t "$IMAGE" sandbox/
say "image $IMAGE built"
