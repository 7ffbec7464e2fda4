package policy

import (
	"bufio"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// differentialSeeds are the programs the mutations start from: the
// corpora's, and the shared corpora's when they lie beside the repository.
func differentialSeeds(t testing.TB) []string {
	var out []string
	for _, c := range loadCorpusFiles(t, "../testdata/corpus/*.tsv", "allowlist.tsv", "smuggling.tsv") {
		out = append(out, c.command)
	}
	shared, _ := filepath.Glob("../../shared/corpora/*.tsv")
	for _, file := range shared {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			cols := strings.SplitN(sc.Text(), "\t", 3)
			var cmd string
			if len(cols) == 3 && json.Unmarshal([]byte(cols[2]), &cmd) == nil {
				out = append(out, cmd)
			}
		}
		f.Close()
	}
	return out
}

// payloads are the commands a mutation hides; each name is unique, so that
// a run of any of them that the analysis did not judge shows.
var payloads = []string{"pwnA -rf ~", "pwnB", "pwnC x y", "pwnD --flag=1"}

// hideouts are the constructs that the classes of parse differences found
// so far live in; %s is a payload, %c a seed program.
var hideouts = []string{
	"%c # comment \\\n%s",
	"ls # \\\n%s",
	"ls #\\\n%s",
	"%c\\\r\n%s",
	"git status \\\r\n%s",
	"%c\r\n%s",
	"ls\r%s",
	"echo a\rb; %s",
	"cat <<E\\\nOF\nEOF\n%s\nE\\\nOF\n",
	"cat <<EOF\n${x\nEOF\n%s\n}\n",
	"cat <<EOF\n$(\nEOF\n%s\n)\n",
	"cat <<EOF\n`\nEOF\n%s\n`\n",
	"cat <<EOF\n$((\nEOF\n%s\n))\n",
	"cat <<'EOF'\n${x\nEOF\n%s\n",
	"cat <<-EOF\n\t${x\n\tEOF\n%s\n}\n",
	"echo $\\\n(%s)",
	"echo \"$\\\n(%s)\"",
	"echo $\\\n{x:-$(%s)}",
	"echo ${x:-<(%s)}",
	"echo ${x:->(%s)}",
	"echo \"${x:-$(%s)}\"",
	"[[ a == @($(%s)) ]]",
	"[[ a == !($(%s)) ]]",
	"[[ a == *$(%s)* ]]",
	"[[ a =~ $(%s) ]]",
	"case a in $(%s)) ;; esac",
	"case a in @($(%s))) ;; esac",
	"echo $(( $(%s) ))",
	"a[$(%s)]=1",
	"f() { %s; }; f",
	"f() { f() { %s; }; }; f; f",
	"eval '%s'",
	"bash -c '%s'",
	"x=1 %s",
	"%c; %s",
	"%c && %s",
	"{ %s; }",
	"(%s)",
	"echo `%s`",
	"echo \"`%s`\"",
	"echo `echo \\`%s\\``",
	"cat <<< \"$(%s)\"",
	"time %s",
	"! %s",
	"if true; then %s; fi",
	"for i in 1; do %s; done",
	"while false; do :; done; %s",
	"echo ${x//$(%s)/y}",
	"echo ${x/#$(%s)}",
	"echo ${x:$(%s)}",
	"echo ${#x[$(%s)]}",
	"echo ${x@Q} $(%s)",
	"echo {a,$(%s)}",
	"echo \\$(%s)",
	"echo '\\'$(%s)",
	"echo \"\\\"$(%s)\"",
	"echo $'\\''$(%s)",
	"echo $'\\'' ; %s #'",
	"echo $\"x\"; %s",
	"cat <<EOF; %s\nbody\nEOF",
	"cat <<EOF | %s\nbody\nEOF",
	"cat <<A <<B\na\nA\nb\nB\n%s",
	"cat <<\"E\"OF\n$(\nEOF\n%s\n",
	"cat <<E\"OF\"\nx\nEOF\n%s",
	"cat << EOF\nEOF \n%s\nEOF\n",
	"echo x #%s",
	"echo x#; %s",
	"echo ${x#}; %s",
	"echo $#; %s",
	"echo \\#; %s",
	"echo a\\\n#b; %s",
	"echo a \\\n#b\n%s",
	// Single quotes are text in a double-quoted ${x-…} ${x=…} ${x+…}
	// ${x?…}, and what they enclose is expanded.
	"echo \"${x:-'$(%s)'}\"",
	"x=1; echo \"${x:+'$(%s)'}\"",
	"echo \"${x='`%s`'}\"",
	"echo \"${y:-${z-'$(%s)'}}\"",
	"cat <<EOF\n${x-'$(%s)'}\nEOF\n",
	"echo \"${x#'$(%s)'}\"",
}

// mutationTokens are the pieces of shell syntax whose readings have
// differed, and the payload in several disguises.
var mutationTokens = []string{
	"#", " # ", "\\\n", "\\", "'", "\"", "$'", "$\"", "`", "$(", "$((", "${", "}", ")", "(", "<(", ">(",
	"@(", "!(", "+(", "<<EOF\n", "\nEOF\n", "<<'E'\n", "\nE\n", "<<-X\n", "\n\tX\n", ";", ";;", "&",
	"&&", "||", "|", "\n", "\t", " ", "case a in a) ", " esac", "[[ ", " ]]", "((", "))", "$[", "]", "=",
	"~", "*", "?", "[", "!", "{", ",", "..", "$x", "${x:-", "\\'", "\\\"", "\\$", "\\#", "\\\r\n", "\r",
	"pwnZ", " pwnZ ", ";pwnZ;", "\npwnZ\n", "$(pwnZ)", "`pwnZ`", "<(pwnZ)", " #\\\npwnZ", "$\\\n(pwnZ)",
	"$'\\x{2d}'", "$'\\c@'", "{a,b}", "=(pwnZ)", "${(e)x}", "&|", "&!", "|&", ">|", "<>", "<<<",
	"\"${x:-'", "'}\"", "${x+'$(pwnZ)'}", "\"${x-'$(pwnZ)'}\"",
}

// escapes are $'…' sequences whose decoding must be bash's.
var escapes = []string{
	`\x{2d}`, `\x2d`, `\x2`, `\x`, `\055`, `\55`, `\400`, `\0`, `\c@`, `\cA`, `\c?`, `\c\\`, `\u2d`, `\u002d`,
	`\U0000002d`, `\U2d`, `\e`, `\E`, `\a`, `\'`, `\"`, `\?`, `\\`, `\q`, `\x{}`, `\x{2d2d}`, `\777`, `\c`, `\u`,
	`\U`, `\x{110000}`, `\ud800`, `\N`,
}

// escapeForms are where an escaped word stands.
var escapeForms = []string{
	"find . $'%sexec' %s {} +",
	"pwnE $'%s'",
	"pwnF $'a%sb'",
	"$'pwn%s' x",
	"env $'%s' pwnG",
}

// differentialPrograms returns the seeds, each payload in each hideout with
// seed programs drawn at random, every escape form, and n random byte-level
// mutations of the seeds.
func differentialPrograms(t testing.TB, n int, seed uint64) []string {
	seeds := differentialSeeds(t)
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	out := append([]string(nil), seeds...)
	for _, h := range hideouts {
		for _, p := range payloads {
			c := seeds[r.IntN(len(seeds))]
			out = append(out, strings.NewReplacer("%c", c, "%s", p).Replace(h))
		}
	}
	for _, f := range escapeForms {
		for _, e := range escapes {
			prog := strings.Replace(f, "%s", e, 1)
			prog = strings.Replace(prog, "%s", "pwnH", 1)
			out = append(out, prog)
		}
	}
	const bytesToInsert = "\\'\"#\n\r;&|$(){}`<> \t!*?[]~=\\\n"
	for range n {
		c := seeds[r.IntN(len(seeds))]
		var b strings.Builder
		switch r.IntN(6) {
		case 4, 5: // one to three tokens inserted
			for range 1 + r.IntN(3) {
				i := r.IntN(len(c) + 1)
				c = c[:i] + mutationTokens[r.IntN(len(mutationTokens))] + c[i:]
			}
			b.WriteString(c)
		case 0: // a byte inserted
			i := r.IntN(len(c) + 1)
			b.WriteString(c[:i])
			b.WriteByte(bytesToInsert[r.IntN(len(bytesToInsert))])
			b.WriteString(c[i:])
		case 1: // a line continuation inserted
			i := r.IntN(len(c) + 1)
			b.WriteString(c[:i] + "\\\n" + c[i:])
		case 2: // a payload hidden
			h := hideouts[r.IntN(len(hideouts))]
			b.WriteString(strings.NewReplacer("%c", c, "%s", payloads[r.IntN(len(payloads))]).Replace(h))
		case 3: // two seeds joined by a random separator
			d := seeds[r.IntN(len(seeds))]
			seps := []string{"\n", ";", " # \\\n", "\\\n", "\r\n", " && ", " | ", "\n#", " `", " $("}
			b.WriteString(c + seps[r.IntN(len(seps))] + d)
		}
		out = append(out, b.String())
	}
	return out
}
