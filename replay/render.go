package replay

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/execgate/execgate/internal/display"
	"github.com/execgate/execgate/policy"
)

// WriteText writes the report for a person to read.
func (r Report) WriteText(w io.Writer) error {
	b := &strings.Builder{}
	span := ""
	if r.First != nil {
		span = fmt.Sprintf(", %s to %s", r.First.Format("2006-01-02"), r.Last.Format("2006-01-02"))
	}
	fmt.Fprintf(b, "%s in %s from %s%s\n\n",
		plural(r.Commands, "command"), plural(r.Sessions.Count, "session"), plural(r.Files, "transcript"), span)
	if r.Commands == 0 {
		r.writeNotes(b)
		_, err := io.WriteString(w, b.String())
		return err
	}
	width := len(count(r.Commands))
	row := func(label string, n int) {
		fmt.Fprintf(b, "  %-13s %*s  %6s\n", label, width, count(n), percent(n, r.Commands))
	}
	row("run unasked", r.Outcomes.Allow)
	if r.Outcomes.Confined > 0 {
		row("run confined", r.Outcomes.Confined)
	} else {
		fmt.Fprintf(b, "  %-13s %*s  %6s  (none: this machine cannot confine, or nothing fit the sandbox)\n", "run confined", width, "—", "")
	}
	row("ask", r.Outcomes.Ask)
	row("refused", r.Outcomes.Deny)

	s := r.Sessions
	fmt.Fprintf(b, "\nquestions per session: median %d, 90th percentile %d, most %d; %s of %s without one\n",
		s.AsksMedian, s.AsksP90, s.AsksMax, count(s.WithoutAsks), plural(s.Count, "session"))
	if len(r.Agents) > 0 {
		fmt.Fprintln(b, "\njudged under")
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		for _, a := range r.Agents {
			fmt.Fprintf(tw, "  %s\t%s commands\t%s\n", a.Agent, count(a.Commands), a.Policy)
		}
		tw.Flush()
	}
	if len(r.AskCauses) > 0 {
		fmt.Fprintln(b, "\ncommonest causes of questions (rule: asked commands, an example)")
		for _, c := range r.AskCauses {
			effect := ""
			if c.Effect != "" {
				effect = " [" + c.Effect + "]"
			}
			fmt.Fprintf(b, "  %-30s %7s%s\n      %s\n      %s\n", c.Rule, count(c.Asks), effect,
				display.Escape(c.Example.Command), display.Escape(c.Example.Reason))
		}
	}
	d := r.Dangerous
	fmt.Fprintf(b, "\ndangerous commands: %s", count(d.Commands))
	if d.Commands > 0 {
		fmt.Fprintf(b, ", %s stopped (asked about or refused), %s let through", count(d.Stopped), count(d.LetThrough))
	}
	fmt.Fprintln(b)
	for _, e := range d.Examples {
		fmt.Fprintf(b, "  %-5s %s\n", e.Decision, display.Escape(e.Command))
		for _, reason := range e.Reasons {
			fmt.Fprintf(b, "        - %s\n", display.Escape(reason))
		}
		fmt.Fprintf(b, "        (%s)\n", display.Escape(e.Where))
	}
	if len(r.Suggestions) > 0 {
		fmt.Fprintln(b, "\nallowlist entries that would spare the most questions")
		for _, sg := range r.Suggestions {
			fmt.Fprintf(b, "  %s  (%s) spares %s\n", display.Escape(sg.Pattern), sg.Agent, plural(sg.Removes, "question"))
			fmt.Fprintf(b, "      matches %s\n", scopeWords(sg.Scope))
			if len(sg.Effects) > 0 {
				fmt.Fprintf(b, "      lets through without asking: %s\n", describeEffects(sg.Effects))
			}
			fmt.Fprintf(b, "      %s\n", display.Escape(sg.Allow))
		}
	}
	r.writeNotes(b)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeNotes says what the figures do not cover.
func (r Report) writeNotes(b *strings.Builder) {
	var notes []string
	if u := r.UnknownDirectory; u.Unrecorded+u.Gone > 0 {
		notes = append(notes, fmt.Sprintf("%s judged in an unknown directory, where nothing relative can be proven safe: %s the transcript does not say where they ran, %s the directory no longer exists",
			plural(u.Unrecorded+u.Gone, "command"), count(u.Unrecorded), count(u.Gone)))
	}
	for _, sk := range r.Skipped {
		notes = append(notes, fmt.Sprintf("%s not counted: %s", plural(sk.Count, "shell call"), sk.Why))
	}
	if r.Problems > 0 {
		notes = append(notes, fmt.Sprintf("%s could not be read and were skipped (each is listed on stderr)", plural(r.Problems, "record or file", "records or files")))
	}
	if len(notes) > 0 {
		fmt.Fprintln(b)
		for _, n := range notes {
			fmt.Fprintf(b, "note: %s\n", n)
		}
	}
}

func scopeWords(scope string) string {
	switch scope {
	case "exact":
		return "exactly these words"
	case "wildcard":
		return "what the wildcard covers, for what the program is for"
	}
	return "these words for all they do, and longer commands starting with them for what the program is for"
}

// effectWords says what each effect is, for people (policy/effects.go).
func effectWords(e string) string {
	switch e {
	case policy.EffectRuns:
		return "runs programs that are not read-only"
	case policy.EffectWrite:
		return "writes files"
	case policy.EffectCredentials:
		return "reads secrets"
	case policy.EffectNetwork:
		return "talks to other hosts"
	case policy.EffectSend:
		return "sends local data to the network"
	case policy.EffectEnvironment:
		return "changes what later programs load or run"
	case policy.EffectCode:
		return "runs code the analysis does not see"
	case policy.EffectPrivilege:
		return "gains rights over the host or other users"
	case policy.EffectUnseen:
		return "has parts the analysis cannot read"
	case policy.EffectDestroy:
		return "does irreversible harm"
	}
	return e
}

func describeEffects(effects []string) string {
	words := make([]string, len(effects))
	for i, e := range effects {
		words[i] = effectWords(e)
	}
	return strings.Join(words, "; ")
}

// plural is n and the noun, in the plural unless n is 1 (an s added,
// or the plural given).
func plural(n int, noun string, plurals ...string) string {
	switch {
	case n == 1:
		return "1 " + noun
	case len(plurals) > 0:
		return count(n) + " " + plurals[0]
	}
	return count(n) + " " + noun + "s"
}

// count writes n with thousands separators.
func count(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func percent(n, of int) string {
	if of == 0 {
		return ""
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(of))
}
