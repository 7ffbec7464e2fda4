#!/usr/bin/env bash
# install.sh — build execgate from source and install it.
#
#   ./install.sh              install to ${PREFIX:-$HOME/.local}
#   ./install.sh --uninstall  remove what this script installed (never your config)
#
# Installs bin/execgate and the shim links lib/execgate/shims/{bash,sh}, and
# writes the default configuration if there is none. Idempotent: running it
# again rebuilds the binary and refreshes the links; it never overwrites a
# configuration.
set -euo pipefail

prefix=${PREFIX:-$HOME/.local}
bindir=$prefix/bin
shimdir=$prefix/lib/execgate/shims
here=$(cd "$(dirname "$0")" && pwd)

say() { printf 'install.sh: %s\n' "$*"; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

uninstall() {
	for name in bash sh; do
		# Only links that point at execgate: never a real shell someone
		# put there.
		if [ -L "$shimdir/$name" ] && [ "$(readlink "$shimdir/$name")" = "$bindir/execgate" ]; then
			rm -f "$shimdir/$name"
		fi
	done
	rmdir "$shimdir" "$prefix/lib/execgate" 2>/dev/null || true
	rm -f "$bindir/execgate"
	say "removed $bindir/execgate and the shims in $shimdir (configuration left in place)"
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

# The shims: execgate behaves as a shell when invoked as bash or sh.
mkdir -p "$shimdir"
for name in bash sh; do
	ln -sfn "$bindir/execgate" "$shimdir/$name"
done
say "linked $shimdir/bash and $shimdir/sh to it"

# The default configuration, only if there is none: the built-in defaults
# written out so that they can be read and edited.
config=${EXECGATE_CONFIG:-${XDG_CONFIG_HOME:-$HOME/.config}/execgate/exec-approvals.json}
if [ -e "$config" ] || [ -L "$config" ]; then
	say "kept the existing configuration $config"
else
	mkdir -p "$(dirname "$config")"
	chmod 0700 "$(dirname "$config")"
	cfgtmp=$(mktemp "$(dirname "$config")/.exec-approvals.XXXXXX")
	cat >"$cfgtmp" <<'JSON'
{
  "version": 1,
  "defaults": {
    "security": "allowlist",
    "ask": "on-miss",
    "askFallback": "deny",
    "timeoutMs": 60000,
    "autoAllowSafe": true
  },
  "output": {
    "maxBytes": 200000,
    "tailBytes": 20000
  },
  "agents": {
    "*": {
      "allowlist": [],
      "denylist": []
    }
  }
}
JSON
	chmod 0600 "$cfgtmp"
	# ln (no -f) fails if a configuration appeared meanwhile: never
	# overwrite one.
	if ln "$cfgtmp" "$config" 2>/dev/null; then
		say "wrote the default configuration $config"
	else
		say "kept the existing configuration $config"
	fi
	rm -f "$cfgtmp"
fi

case ":$PATH:" in
*":$bindir:"*) ;;
*) say "note: $bindir is not on your PATH; add it, e.g. export PATH=\"$bindir:\$PATH\"" ;;
esac
cat <<EOF
install.sh: next steps
  - see what execgate would do:   execgate check -- 'git status; rm -rf ~'
  - put your agent behind the gate (shows what it would change; add --apply, undo with --undo):
      execgate setup claude      (or: codex, gemini, aider, shell for make/npm/\$SHELL)
  - watch what runs:               execgate log --follow
  - edit the policy:               execgate policy / execgate allow / execgate deny (config: $config)
  - approve from another terminal: execgate hub --detach, then execgate approve
      as a service: execgate hub unit systemd > ~/.config/systemd/user/execgate-hub.service
                    (then systemctl --user enable --now execgate-hub; on macOS: execgate hub unit launchd)
EOF
