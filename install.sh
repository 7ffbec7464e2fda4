#!/usr/bin/env bash
# install.sh — build execgate from source and install it.
#
#   ./install.sh                      install to ${PREFIX:-$HOME/.local}
#   ./install.sh --uninstall          undo setup, stop the hub, remove what this script installed
#   ./install.sh --uninstall --force  remove it even if something still runs execgate
#
# Installs bin/execgate, bin/execgate-shell, bin/execgate-export and the shim links
# lib/execgate/shims/{bash,sh,zsh} (to execgate-shell), and
# writes the default configuration if there is none. Idempotent: running it
# again rebuilds the binary and refreshes the links; it never overwrites a
# configuration. EXECGATE_BINARY=FILE installs that prebuilt binary instead
# of building one.
#
# --uninstall first runs `execgate setup --undo-all` (every agent settings
# file setup --apply changed is restored) and `execgate hub stop`; if either
# fails it stops there, removing nothing, since a removed binary that agent
# settings, ~/.npmrc or a hub still run leaves them failing. It never removes
# the configuration or the state directory (audit log): it says where they are.
set -euo pipefail

prefix=${PREFIX:-$HOME/.local}
bindir=$prefix/bin
shimdir=$prefix/lib/execgate/shims
here=$(cd "$(dirname "$0")" && pwd)

say() { printf 'install.sh: %s\n' "$*"; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

# The configuration file: where install writes it (EXECGATE_CONFIG, else
# XDG_CONFIG_HOME, else ~/.config).
config=${EXECGATE_CONFIG:-${XDG_CONFIG_HOME:-$HOME/.config}/execgate/exec-approvals.json}

# state_dir is execgate's state directory (audit log, hub log, setup's
# records), as the binary finds it (shim.StateDir): an absolute
# XDG_STATE_HOME, else the platform's default.
state_dir() {
	local base=${XDG_STATE_HOME:-}
	case $base in
	/*) ;;
	*) if [ "$(uname -s)" = Darwin ]; then base="$HOME/Library/Application Support"; else base=$HOME/.local/state; fi ;;
	esac
	printf '%s/execgate\n' "$base"
}

# undo_integrations undoes setup and stops the hub with the installed
# binary; it returns non-zero when something still points at execgate.
undo_integrations() {
	local exe=$1 help
	# Not a pipe into grep -q: under pipefail its early exit fails the
	# pipeline by SIGPIPE.
	help=$("$exe" setup --help 2>/dev/null) || true
	case $help in
	*--undo-all*) ;;
	*)
		say "$exe is older than setup --undo-all: run ./install.sh to update it, then ./install.sh --uninstall"
		return 1
		;;
	esac
	say "undoing what execgate setup --apply changed"
	if ! "$exe" setup --undo-all --shims "$shimdir"; then
		return 1
	fi
	say "stopping the hub"
	"$exe" hub stop || return 1
}

# orphaned_records lists what setup's records say still runs a binary that
# is already gone; it returns non-zero when there is any.
orphaned_records() {
	local exe=$1 records
	records=$(state_dir)/setup
	set -- "$records"/*.json
	[ -e "$1" ] || return 0
	say "$exe is already gone, but setup's records ($records) say these files were set up to run it:"
	sed -n 's/^ *"file": "\(.*\)",\{0,1\}$/  \1/p' "$@"
	say "to restore them: ./install.sh && ./install.sh --uninstall (installs execgate again, then undoes them),"
	say "or take execgate's entries out of them by hand and remove $records; a hub started earlier may still run"
	return 1
}

# remove_files removes the binary and the shims, saying what it removed.
remove_files() {
	local exe=$1 removed=()
	for name in bash sh zsh; do
		# Only links that point at execgate: never a real shell someone
		# put there.
		if [ -L "$shimdir/$name" ] && { [ "$(readlink "$shimdir/$name")" = "$exe" ] || [ "$(readlink "$shimdir/$name")" = "$exe-shell" ]; }; then
			rm -f "$shimdir/$name"
			removed+=("$shimdir/$name")
		fi
	done
	rmdir "$shimdir" "$prefix/lib/execgate" 2>/dev/null || true
	for bin in "$exe" "$exe-shell" "$exe-export"; do
		if [ -e "$bin" ] || [ -L "$bin" ]; then
			rm -f "$bin"
			removed+=("$bin")
		fi
	done
	if [ ${#removed[@]} -eq 0 ]; then
		say "execgate is not installed in $prefix: nothing to remove"
	else
		say "removed ${removed[*]}"
	fi
}

uninstall() {
	local force=$1 exe=$bindir/execgate state
	if [ -x "$exe" ]; then
		if ! undo_integrations "$exe"; then
			[ "$force" = 1 ] || die "stopped before removing execgate: fix what is said above and run ./install.sh --uninstall again, or add --force to remove execgate anyway (what still names it will then fail)"
			say "--force: removing execgate although something still names it"
		fi
	elif ! orphaned_records "$exe"; then
		[ "$force" = 1 ] || die "stopped: fix the files above, or add --force to remove what is left of execgate anyway"
		say "--force: removing what is left of execgate"
	fi
	remove_files "$exe"
	state=$(state_dir)
	if [ -e "$config" ] || [ -e "$state" ]; then
		say "left in place, yours to keep or delete:"
		if [ -e "$config" ]; then
			printf '  %s\n      your policy and the hub token; a new install uses it again (delete: rm %q)\n' "$config" "$config"
		fi
		if [ -e "$state" ]; then
			printf '  %s\n      the audit log of what agents ran, the hub log and setup'"'"'s records (delete: rm -r %q)\n' "$state" "$state"
		fi
	fi
}

action=install
force=0
for arg in "$@"; do
	case $arg in
	--uninstall) action=uninstall ;;
	--force) force=1 ;;
	-h | --help) sed -n '2,17p' "$0"; exit 0 ;;
	*) die "unknown option $arg (try --help)" ;;
	esac
done
if [ "$action" = uninstall ]; then
	uninstall "$force"
	exit 0
fi
[ "$force" = 0 ] || die "--force goes with --uninstall"

if [ -n "${EXECGATE_BINARY:-}" ]; then
	[ -f "$EXECGATE_BINARY" ] && [ -x "$EXECGATE_BINARY" ] || die "EXECGATE_BINARY=$EXECGATE_BINARY is not an executable file"
else
	command -v go >/dev/null 2>&1 || die "needs the Go toolchain (go 1.26 or later) on PATH, or EXECGATE_BINARY=FILE"
fi

mkdir -p "$bindir"
tmp=$(mktemp "$bindir/.execgate.XXXXXX")
tmpshell=$(mktemp "$bindir/.execgate-shell.XXXXXX")
trap 'rm -f "$tmp" "$tmpshell"' EXIT
# Two binaries from one tree: execgate, the command-line tool, and
# execgate-shell, the shim alone, which the bash and sh links point at: it
# links nothing else, so every agent command starts faster
# (docs/BENCHMARKS.md). A prebuilt EXECGATE_BINARY serves as both unless
# EXECGATE_SHELL_BINARY names its execgate-shell.
shellbin=$bindir/execgate-shell
if [ -n "${EXECGATE_BINARY:-}" ]; then
	cp "$EXECGATE_BINARY" "$tmp"
	if [ -n "${EXECGATE_SHELL_BINARY:-}" ]; then
		[ -f "$EXECGATE_SHELL_BINARY" ] && [ -x "$EXECGATE_SHELL_BINARY" ] || die "EXECGATE_SHELL_BINARY=$EXECGATE_SHELL_BINARY is not an executable file"
		cp "$EXECGATE_SHELL_BINARY" "$tmpshell"
	else
		rm -f "$tmpshell" "$shellbin"
		shellbin=$bindir/execgate
	fi
else
	(cd "$here" && CGO_ENABLED=0 go build -trimpath -buildvcs=auto -o "$tmp" ./cmd/execgate)
	(cd "$here" && CGO_ENABLED=0 go build -trimpath -buildvcs=auto -o "$tmpshell" ./cmd/execgate-shell)
fi
chmod 0755 "$tmp"
mv -f "$tmp" "$bindir/execgate"
if [ -f "$tmpshell" ]; then
	chmod 0755 "$tmpshell"
	mv -f "$tmpshell" "$bindir/execgate-shell"
	say "installed $bindir/execgate and $bindir/execgate-shell"
else
	say "installed $bindir/execgate"
fi
trap - EXIT

# execgate-export sends the audit log to the collectors audit.export names
# (`execgate log --export` runs it). It is a binary apart so that neither
# the shim nor the CLI, which every hook call starts, links and initialises
# the OpenTelemetry SDK.
if [ -z "${EXECGATE_BINARY:-}" ]; then
	tmpexport=$(mktemp "$bindir/.execgate-export.XXXXXX")
	trap 'rm -f "$tmpexport"' EXIT
	(cd "$here" && CGO_ENABLED=0 go build -trimpath -buildvcs=auto -o "$tmpexport" ./cmd/execgate-export)
	chmod 0755 "$tmpexport"
	mv -f "$tmpexport" "$bindir/execgate-export"
	trap - EXIT
	say "installed $bindir/execgate-export"
fi

# The shims: the shim binary behaves as a shell when invoked as bash, sh or
# zsh (the zsh shim runs the real zsh, and refuses to run anything without
# one).
mkdir -p "$shimdir"
for name in bash sh zsh; do
	ln -sfn "$shellbin" "$shimdir/$name"
done
say "linked $shimdir/bash, $shimdir/sh and $shimdir/zsh to $shellbin"

# The default configuration, only if there is none: the built-in defaults
# written out so that they can be read and edited.
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
  - put your agent behind the gate (shows what it would change; add --apply, undo with --undo;
    ./install.sh --uninstall undoes them all):
      execgate setup claude      (or: codex, gemini, aider, shell for make/npm/\$SHELL)
  - watch what runs:               execgate log --follow
  - edit the policy:               execgate policy / execgate allow / execgate deny (config: $config)
  - approve from another terminal: execgate hub --detach, then execgate approve
      as a service: execgate hub unit systemd > ~/.config/systemd/user/execgate-hub.service
                    (then systemctl --user enable --now execgate-hub; on macOS: execgate hub unit launchd)
EOF
