# execgate's interactive gate: bash sources this file at start-up when the
# shim starts an interactive shell (see shim/interactive.go), and it makes
# execgate judge every command line typed into the shell before any of it
# runs (see shim/gate.go).
#
# Bash reads it in place of the user's own start-up files (as --rcfile, as
# $ENV, or from PROMPT_COMMAND before the first prompt), so it first runs
# those files as bash would have, then installs the gate last: extdebug and
# a DEBUG trap. On the first DEBUG of each command line the trap takes the
# whole line from the history and asks `execgate gate`: allowed, the line
# runs with no further question; refused, the trap interrupts the shell as
# ^C would, so that nothing of the line runs (and, should a SIGINT trap keep
# the line going, returns 1 for each of its commands, which extdebug skips).
# A line that did not reach the history is judged command by command from
# $BASH_COMMAND instead. Nothing typed is ever let through unjudged.
#
# What runs between command lines (PROMPT_COMMAND, the prompt's own command
# substitutions, completion, key bindings) is configuration, not typing: it
# is let through. Bash itself says which is which: while it executes a typed
# line HISTCMD is the history number \! shows, between lines one more (recent
# bash computes HISTCMD as history_number - executing; older ones did not,
# and the shim checks the running bash does before it uses this file).
#
# It is a tripwire for mistakes, not a sandbox: a program started from an
# allowed line (python, a script, a shell the shim does not front) runs
# what it likes.

# What the shim passed, kept in shell variables: nothing of it is left in
# the environment of the commands this shell runs.
__execgate_bin=${EXECGATE_GATE_BIN-}
__execgate_config=${EXECGATE_GATE_CONFIG-}
__execgate_agent=${EXECGATE_GATE_AGENT-}
__execgate_hook=${EXECGATE_GATE_HOOK-}
__execgate_startup=${EXECGATE_GATE_STARTUP-}
__execgate_rc=${EXECGATE_GATE_RC-}
case $__execgate_hook in
prompt)
	if [[ -n ${EXECGATE_GATE_SAVED+set} ]]; then
		PROMPT_COMMAND=$EXECGATE_GATE_SAVED
	else
		builtin unset -v PROMPT_COMMAND
	fi
	;;
env)
	if [[ -n ${EXECGATE_GATE_SAVED+set} ]]; then
		ENV=$EXECGATE_GATE_SAVED
	else
		builtin unset -v ENV
	fi
	;;
esac
builtin unset -v EXECGATE_GATE_BIN EXECGATE_GATE_CONFIG EXECGATE_GATE_AGENT EXECGATE_GATE_HOOK \
	EXECGATE_GATE_STARTUP EXECGATE_GATE_RC EXECGATE_GATE_SAVED

if [[ -z $__execgate_bin || -z $__execgate_config || -z $__execgate_agent ]]; then
	# Sourced by hand, or the shim and this file disagree: no shell rather
	# than an unchecked one.
	builtin printf '%s\n' "execgate: the interactive gate is missing its settings; not starting the shell" >&2
	builtin exit 126
fi

# The user's start-up files, as bash would have run them (bash(1),
# INVOCATION), at top level so that their declarations stay global. The
# shim starts bash as a non-login shell and emulates login start-up here,
# since a login shell ignores --rcfile: `shopt login_shell` reads off.
if [[ " $__execgate_startup " == *" profile "* ]]; then
	[[ -e /etc/profile ]] && . /etc/profile
	if [[ -e ~/.bash_profile ]]; then
		. ~/.bash_profile
	elif [[ -e ~/.bash_login ]]; then
		. ~/.bash_login
	elif [[ -e ~/.profile ]]; then
		. ~/.profile
	fi
fi
if [[ " $__execgate_startup " == *" profile-sh "* ]]; then
	[[ -e /etc/profile ]] && . /etc/profile
	[[ -e ~/.profile ]] && . ~/.profile
fi
if [[ " $__execgate_startup " == *" rc "* ]]; then
	if [[ -n $__execgate_rc ]]; then
		[[ -e $__execgate_rc ]] && . "$__execgate_rc"
	else
		[[ -e ~/.bashrc ]] && . ~/.bashrc
	fi
fi
if [[ " $__execgate_startup " == *" env "* && -n ${ENV-} ]]; then
	# Bash expands $ENV (parameters, command substitution, arithmetic)
	# before reading the file it names.
	builtin eval "__execgate_rc=\"${ENV//\"/\\\"}\""
	[[ -e $__execgate_rc ]] && . "$__execgate_rc"
fi

# The gate. Aliases the start-up files defined must not rewrite its
# functions, so they are defined with alias expansion off.
if builtin shopt -q expand_aliases; then
	__execgate_aliases=1
	builtin shopt -u expand_aliases
else
	__execgate_aliases=
fi

# __execgate_debug is the DEBUG trap: $1 is the $_ of the command about to
# run, restored when the trap returns.
__execgate_debug() {
	# (builtin local is no declaration keyword to the parser: its words
	# are split, hence the quotes.)
	builtin local __execgate_s="$?" __execgate_k="${__execgate_fmt@P}"
	if [[ ${__execgate_k%% *} == "$__execgate_line" && $__execgate_verdict == allow ]]; then
		# The rest of an allowed line, or what runs before the next: the
		# one path each command of a loop takes, kept short.
		[[ -n $__execgate_user ]] || return 0
		__execgate_chain "$__execgate_s" "$1"
		return
	fi
	builtin local __execgate_cn="${__execgate_k%% *}" __execgate_b="${__execgate_k##* }" __execgate_t __execgate_between=
	if [[ -n $__execgate_int && $BASHPID == "$$" ]]; then
		# The user's SIGINT trap, lifted to interrupt a refused line.
		builtin eval -- "$__execgate_int"
		__execgate_int=
	fi
	# Between command lines? HISTCMD is history_number - executing, and
	# \! shows history_number - 1, or 1 when that is 0; history_number is
	# 1 when history is off.
	if [[ ! -o history ]]; then
		[[ $HISTCMD == 1 ]] && __execgate_between=1
	elif [[ $HISTCMD == 1 && $__execgate_b == 1 ]]; then
		# An empty history between lines, or the first line of a new
		# history running: the history itself tells, once per line.
		if [[ $__execgate_empty != "$__execgate_cn "* ]]; then
			__execgate_t=$(builtin history 1)
			__execgate_empty="$__execgate_cn ${__execgate_t:+no}"
		fi
		[[ $__execgate_empty == "$__execgate_cn " ]] && __execgate_between=1
	elif [[ -n $__execgate_b && -z ${__execgate_b//[0-9]/} && $HISTCMD == $((__execgate_b + 1)) ]]; then
		__execgate_between=1
	fi
	if [[ -n $__execgate_between ]]; then
		# Nothing typed runs here. The last history number is noted: the
		# next line is in the history when it gets a new one (and
		# PROMPT_COMMAND may read other shells' lines in).
		__execgate_last=$((HISTCMD - 1))
		__execgate_chain "$__execgate_s" "$1"
		return
	fi
	if [[ $__execgate_cn != "$__execgate_line" ]]; then
		# The first command of a new line (\# counts the lines bash read).
		# While it runs, HISTCMD is its history number.
		__execgate_line=$__execgate_cn __execgate_verdict=each
		if [[ -o history && $HISTCMD != "$__execgate_last" ]] &&
			builtin local HISTTIMEFORMAT="" 2>/dev/null; then
			__execgate_t=$(builtin history 1)
			__execgate_t=${__execgate_t#"${__execgate_t%%[![:space:]]*}"}
			if [[ ${__execgate_t%%[!0-9]*} == "$HISTCMD" ]]; then
				# "%5d%c %s": the number, '*' or ' ', a space, the line.
				__execgate_t=${__execgate_t#"$HISTCMD"}
				__execgate_t=${__execgate_t:2}
				__execgate_verdict=line
			fi
		fi
		__execgate_last=$HISTCMD
		if [[ $__execgate_verdict == line ]]; then
			if __execgate_ask "" "$__execgate_t"; then
				__execgate_verdict=allow
			else
				__execgate_verdict=deny
				__execgate_abort
				return 1
			fi
		fi
	fi
	case $__execgate_verdict in
	allow) ;;
	each)
		if ! __execgate_ask --each "$BASH_COMMAND"; then
			__execgate_verdict=deny
			__execgate_abort
			return 1
		fi
		;;
	*) return 1 ;;
	esac
	__execgate_chain "$__execgate_s" "$1"
}

# __execgate_ask runs `execgate gate` on one line ($2), with $1 an extra
# flag or "". Whoever types into this shell is the agent, so nobody is asked
# on this terminal: the hub's approvers only.
__execgate_ask() {
	builtin local -a __execgate_a
	builtin local __execgate_n
	__execgate_a=(gate --config "$__execgate_config" --agent "$__execgate_agent")
	if [[ -n $1 ]]; then
		__execgate_a+=("$1")
	elif builtin shopt -q expand_aliases; then
		# The history holds the line as typed; bash expands aliases in it.
		for __execgate_n in "${!BASH_ALIASES[@]}"; do
			__execgate_a+=(--alias "$__execgate_n=${BASH_ALIASES[$__execgate_n]}")
		done
	fi
	builtin command -- "$__execgate_bin" "${__execgate_a[@]}" -- "$2" </dev/null
}

# __execgate_abort stops the rest of a refused line: SIGINT makes the shell
# drop it as it does on ^C ($? is then 130), a subshell just ends. A SIGINT
# trap of the user's would keep the line going, so it is lifted first and
# put back by the next trap in this shell.
__execgate_abort() {
	if [[ $BASHPID == "$$" ]]; then
		__execgate_int=$(builtin trap -p INT)
		builtin trap - INT
		builtin kill -INT "$$"
	else
		builtin trap - INT
		builtin kill -INT "$BASHPID"
		builtin exit 130
	fi
}

# __execgate_chain runs the DEBUG trap the start-up files had set (such as
# bash-preexec's) with the command's $? ($1) and $_ ($2); its status is the
# trap's, so it may still skip the command as it did before.
__execgate_chain() {
	[[ -n $__execgate_user ]] || return 0
	__execgate_status "$1" "$2"
	builtin eval -- "$__execgate_user"
}

# __execgate_status returns $1, leaving $2 as $_.
__execgate_status() {
	return "$1"
}

# The DEBUG trap the start-up files set, if any: `trap -p` prints it as
# "trap -- 'STRING' DEBUG", quoted for eval.
__execgate_trapstring() {
	__execgate_user=$2
}
__execgate_user=
__execgate_t=$(builtin trap -p DEBUG)
if [[ -n $__execgate_t ]]; then
	builtin eval "__execgate_trapstring ${__execgate_t#trap }"
fi
if [[ $__execgate_user == - ]]; then
	__execgate_user= # POSIX mode prints the default disposition too
fi
builtin unset -f __execgate_trapstring
builtin unset -v __execgate_t __execgate_rc __execgate_startup

# Every line must reach the history for the trap to read it whole; lines
# that still do not (history off, HISTSIZE=0) are judged command by command.
builtin shopt -s extdebug cmdhist
HISTCONTROL=
HISTIGNORE=
__execgate_fmt='\# \!'
__execgate_k=${__execgate_fmt@P}
__execgate_line=${__execgate_k%% *}
__execgate_verdict=allow
__execgate_last=$((HISTCMD - 1))
__execgate_empty=
__execgate_int=
builtin unset -v __execgate_k
# A command of our own at the end of PROMPT_COMMAND (a string, or an array
# in bash 5.1 and later), so that the trap notes the history number after
# bash read the history file and after any history -n of PROMPT_COMMAND's.
__execgate_prompt() {
	__execgate_last=$((HISTCMD - 1))
}
__execgate_k=$(builtin declare -p PROMPT_COMMAND 2>/dev/null)
__execgate_k=${__execgate_k#declare -}
if [[ ${__execgate_k%% *} == *a* ]]; then
	PROMPT_COMMAND+=(__execgate_prompt)
elif [[ -n ${PROMPT_COMMAND-} ]]; then
	PROMPT_COMMAND+=$'\n__execgate_prompt'
else
	PROMPT_COMMAND=__execgate_prompt
fi
builtin unset -v __execgate_k
builtin readonly HISTCONTROL HISTIGNORE HISTCMD __execgate_bin __execgate_config __execgate_agent \
	__execgate_fmt __execgate_user
builtin readonly -f __execgate_debug __execgate_ask __execgate_abort __execgate_chain __execgate_status __execgate_prompt
builtin trap -- '__execgate_debug "$_"' DEBUG
if [[ $(builtin trap -p DEBUG) != "trap -- '__execgate_debug \"\$_\"' DEBUG" ]] ||
	! builtin shopt -q extdebug || [[ -z $HISTCMD || -n ${HISTCMD//[0-9]/} ]] ||
	! builtin declare -F __execgate_debug __execgate_ask __execgate_abort >/dev/null; then
	builtin printf '%s\n' "execgate: the interactive gate could not be installed; not starting the shell" >&2
	builtin exit 126
fi
if [[ -n $__execgate_aliases ]]; then
	builtin shopt -s expand_aliases
fi
builtin unset -v __execgate_aliases
if [[ $__execgate_hook == prompt ]]; then
	# Sourced from PROMPT_COMMAND before the first prompt, in place of the
	# PROMPT_COMMAND bash would have run there.
	builtin unset -v __execgate_hook
	for __execgate_hook in "${PROMPT_COMMAND[@]}"; do
		builtin eval -- "$__execgate_hook"
	done
fi
builtin unset -v __execgate_hook
