# Shell programs that must behave identically under bash and under the shim
# (security=full). Each program starts with a line "### name" and runs as
# `bash -c PROGRAM prog 'a b' c`, as a script file and from stdin.
# Avoid what legitimately differs between two runs: $$, $PPID, times.
### echo
echo hello world
### printf-formats
printf '%s|%5d|%-4s|%x\n' str 42 ab 255
### quoting-single
echo 'single $HOME `x` "q"'
### quoting-double
x=world; echo "hello \"$x\" \$literal \\back"
### quoting-ansi-c
echo $'tab\tnew\nline' | od -c | head -3
### quoting-mixed
echo 'a'"b"$'c'd"$(echo e)"
### word-splitting
v="a   b  c"; for w in $v; do echo "[$w]"; done; echo "[$v]"
### ifs
IFS=: read -r a b c <<< "x:y:z"; echo "$c$b$a"
### globbing-noglob
set -f; echo *; set +f
### brace-expansion
echo {a,b}{1..3} {z..x}
### tilde
HOME=/tmp/fakehome; echo ~ ~/x
### positional
echo "0=$0 1=$1 2=$2 #=$#"; for a in "$@"; do echo "<$a>"; done
### positional-star
IFS=,; echo "$*"
### shift
shift; echo "$# $1"
### set-positional
set -- x y z; echo "$# $2"
### heredoc
cat <<EOF
value: $((6*7))
  indented $1
EOF
### heredoc-quoted
cat <<'EOF'
$not $(expanded)
EOF
### heredoc-tabs
cat <<-EOF
		stripped
	EOF
### herestring
tr a-z A-Z <<< "shout"
### arrays
arr=(one "two three" four); echo "${#arr[@]} ${arr[1]}"; for x in "${arr[@]}"; do echo "-$x"; done
### assoc-arrays
declare -A m=([k1]=v1 [k2]=v2); echo "${m[k2]}"; echo "${!m[@]}" | tr ' ' '\n' | sort
### array-slice
a=(0 1 2 3 4 5); echo "${a[@]:2:3}"
### param-expansion
p=/usr/local/lib/file.tar.gz; echo "${p##*/} ${p%%.*} ${p#*/} ${p%.*} ${#p} ${p/lib/LIB} ${p^^}"
### param-default
unset u; echo "${u:-def} ${u-d2} ${u:+alt}"; u=; echo "[${u:-empty}]"
### param-error
unset u; echo "${u:?u is unset}"; echo not reached
### arithmetic
echo $((2**10)) $((17 % 5)) $((7/2)) $(( (1<<4) | 3 )); i=5; ((i++)); echo $i
### let-and-declare
declare -i n=3; n+=4; let m=n*2; echo $n $m
### regex-match
s="version 1.22.3"; if [[ $s =~ ([0-9]+)\.([0-9]+) ]]; then echo "${BASH_REMATCH[0]} ${BASH_REMATCH[2]}"; fi
### double-brackets
[[ -n x && ! -z y ]] && [[ abc == a* ]] && [[ b < c ]] && echo ok
### test-builtin
[ 3 -lt 4 ] && test -d / && echo yes; [ -e /nonexistent ]; echo $?
### case
for w in apple Bob 42 -x; do case $w in [a-z]*) echo lower;; [A-Z]*) echo upper;; *[0-9]) echo num;; *) echo other;; esac; done
### if-elif
x=2; if ((x==1)); then echo one; elif ((x==2)); then echo two; else echo many; fi
### for-c-style
for ((i=0;i<3;i++)); do printf '%d ' $i; done; echo
### while-read
printf 'l1\nl2\nl3\n' | while read -r line; do echo "got $line"; done
### until-break-continue
i=0; until ((i>=6)); do ((i++)); ((i==2)) && continue; ((i==5)) && break; echo $i; done
### functions
f() { local x=$1; echo "in f: $x $#"; return 3; }; f a b; echo "rc=$?"
### recursion
fact() { (( $1 <= 1 )) && echo 1 && return; echo $(( $1 * $(fact $(( $1 - 1 ))) )); }; fact 10
### subshell
x=outer; (x=inner; echo $x); echo $x
### command-substitution
n=$(printf 'a\nb\nc\n' | wc -l); echo "lines: $n $(echo `echo nested`)"
### process-substitution
diff <(printf 'a\nb\n') <(printf 'a\nc\n'); echo "diff rc=$?"
### pipes
seq 1 10 | grep -v 3 | sort -rn | head -3
### pipefail
set -o pipefail; false | true; echo "rc=$?"; set +o pipefail; false | true; echo "rc=$?"
### pipestatus
true | false | (exit 3); echo "${PIPESTATUS[@]}"
### errexit
set -e; echo before; false; echo after
### errexit-nested
set -euo pipefail; f() { echo in; return 0; }; f; x=$(echo ok); echo "$x"; ls /nonexistent-dir
### nounset
set -u; echo "${1}"; echo "$undefined_var"; echo unreachable
### xtrace
set -x; a=1; echo "$a"; set +x; echo quiet
### verbose-stderr
echo to-stdout; echo to-stderr >&2; echo again
### redirections
tmp=$(mktemp); echo one > "$tmp"; echo two >> "$tmp"; cat < "$tmp"; wc -l < "$tmp"; rm -f "$tmp"
### redirect-fd
exec 3>&1; echo via-fd3 >&3; exec 3>&-; { echo err >&2; } 2>&1
### redirect-devnull
echo hidden >/dev/null; ls /nonexistent 2>/dev/null; echo "rc=$?"
### traps-exit
trap 'echo trapped exit' EXIT; echo body
### traps-err
trap 'echo "err at line $LINENO"' ERR; false; echo continuing
### trap-return-status
trap 'echo cleanup' EXIT; exit 7
### exit-codes
(exit 0); echo $?; (exit 1); echo $?; (exit 42); echo $?; (exit 255); echo $?; (exit 256); echo $?
### exit-255
exit 255
### exit-3
echo partial; exit 3
### exit-negative
exit -1
### command-not-found
nosuchcommand-execgate arg; echo "rc=$?"
### not-executable
printf 'echo x\n' > ./notexec; chmod -x ./notexec; ./notexec; echo "rc=$?"; rm -f ./notexec
### syntax-error
echo before
if then fi
### syntax-error-unclosed
echo "unclosed
### syntax-error-paren
echo ok; ( echo x
### bad-substitution
x=1; echo ${x:-:}; echo ${x;}
### builtin-errors
cd /nonexistent-dir; echo "rc=$?"; shift 5; echo "rc=$?"
### declare-print
declare -a arr=(1 2); declare -p arr; f() { :; }; declare -f f
### local-scope
x=global; f() { local x=local; g; }; g() { echo "g sees $x"; }; f; echo $x
### string-ops
s="Hello, World"; echo "${s,,} ${s:7} ${s:0:5} ${s//o/0}"
### printf-v
printf -v out '%03d' 7; echo "$out"
### mapfile
mapfile -t lines < <(printf 'x\ny\nz\n'); echo "${#lines[@]} ${lines[2]}"
### read-array
read -ra parts <<< "p q r"; echo "${parts[1]}"
### extglob
shopt -s extglob; x=aaab; echo "${x##+(a)}"; [[ foo.txt == !(*.sh) ]] && echo not-sh
### nullglob
shopt -s nullglob; cd "$(mktemp -d)"; for f in *.none; do echo "$f"; done; echo done; rmdir "$PWD"
### background-wait
(sleep 0.05; echo bg done) & wait; echo after wait
### background-status
(exit 9) & wait $!; echo "bg rc=$?"
### coproc-free-jobs
sleep 0.01 & wait; jobs; echo jobs-ok
### eval
cmd='echo evaluated $1'; eval "$cmd"
### source-file
tmp=$(mktemp); echo 'sourced_var=42' > "$tmp"; . "$tmp"; echo $sourced_var; rm -f "$tmp"
### nested-bash
bash -c 'echo "inner $0 $1"' innername innerarg; echo "outer rc=$?"
### getopts
set -- -a -b val rest; while getopts ab: o; do echo "opt $o ${OPTARG:-}"; done; shift $((OPTIND-1)); echo "rest $*"
### unicode
echo "héllo wörld ✓ 日本"; s="日本語"; echo ${#s}
### binary-output
printf '\x00\x01\x02\xff' | od -An -tx1
### long-output
seq 1 20000 | tail -2
### kill-self
echo before; kill -TERM $$; echo after
### bash-version-var
[[ -n $BASH_VERSION ]] && echo has-version; echo "$BASH"
### shellopts
echo "$-" | tr -d 'hH'; shopt -q extglob && echo extglob-on || echo extglob-off
### lineno-funcname
f() { echo "$FUNCNAME line $LINENO"; }; f
### wait-exit
false & wait $!; echo $?
