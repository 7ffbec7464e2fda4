#!/usr/bin/env bash
# install.sh — build execgate from source and install it.
#
#   ./install.sh              install to ${PREFIX:-$HOME/.local}
#   ./install.sh --uninstall  remove what this script installed (never your config)
#
# Idempotent: running it again rebuilds and replaces the binary.
set -euo pipefail

prefix=${PREFIX:-$HOME/.local}
bindir=$prefix/bin
here=$(cd "$(dirname "$0")" && pwd)

say() { printf 'install.sh: %s\n' "$*"; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

uninstall() {
	rm -f "$bindir/execgate"
	say "removed $bindir/execgate (configuration left in place)"
}

case "${1:-}" in
--uninstall) uninstall; exit 0 ;;
"") ;;
-h | --help) sed -n '2,7p' "$0"; exit 0 ;;
*) die "unknown option $1 (try --help)" ;;
esac

command -v go >/dev/null 2>&1 || die "needs the Go toolchain (go 1.26 or later) on PATH"

mkdir -p "$bindir"
tmp=$(mktemp "$bindir/.execgate.XXXXXX")
trap 'rm -f "$tmp"' EXIT
(cd "$here" && CGO_ENABLED=0 go build -trimpath -o "$tmp" ./cmd/execgate)
chmod 0755 "$tmp"
mv -f "$tmp" "$bindir/execgate"
trap - EXIT
say "installed $bindir/execgate"

case ":$PATH:" in
*":$bindir:"*) ;;
*) say "note: $bindir is not on your PATH; add it, e.g. export PATH=\"$bindir:\$PATH\"" ;;
esac
say "try: execgate check -- 'git status; rm -rf ~'"
