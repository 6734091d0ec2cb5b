#!/usr/bin/env bash
# A local stand-in for the official `haproxy:2.6` image, for a machine that reaches no image registry (as the image
# check's Debian base stands in for `python:3.11-slim`): Debian bookworm's haproxy 2.6 on a minimal
# debootstrap root, run as the official image runs it: as the `haproxy` user, `haproxy -W -db -f
# /usr/local/etc/haproxy/haproxy.cfg` (compose.yaml mounts deploy/haproxy.cfg there), stopped by SIGUSR1.
# Tagged docker.io/library/haproxy:2.6, so that `podman-compose -f deploy/compose.yaml up` finds it and pulls nothing.
# Usage: deploy/standin-haproxy.sh        (needs root, podman and debootstrap; FORCE=1 builds it again)
set -euo pipefail
TAG=docker.io/library/haproxy:2.6
if podman image exists "$TAG" && [ "${FORCE:-0}" != 1 ]; then echo "$TAG exists"; exit 0; fi
command -v debootstrap >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap)
ROOTFS=$(mktemp -d "${TMPDIR:-/tmp}/standin-haproxy.XXXXXX")
trap 'rm -rf "$ROOTFS"' EXIT
debootstrap --variant=minbase --include=haproxy bookworm "$ROOTFS" >"$ROOTFS.log" 2>&1 \
  || { tail -20 "$ROOTFS.log"; exit 1; }
mkdir -p "$ROOTFS/usr/local/etc/haproxy"
cp "$ROOTFS/etc/haproxy/haproxy.cfg" "$ROOTFS/usr/local/etc/haproxy/haproxy.cfg"  # a default until one is mounted
rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/*
tar -C "$ROOTFS" -c . | podman import \
  --change 'USER haproxy' --change 'WORKDIR /var/lib/haproxy' --change 'STOPSIGNAL SIGUSR1' --change 'EXPOSE 8080' \
  --change 'CMD ["haproxy", "-W", "-db", "-f", "/usr/local/etc/haproxy/haproxy.cfg"]' - "$TAG" >/dev/null
rm -f "$ROOTFS.log"
echo "$TAG: $(podman run --rm "$TAG" haproxy -v | head -1)"
