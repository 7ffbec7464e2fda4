package shim

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// FuzzParseCommandLine: any argv (words separated by NUL; "" is no words
// at all) parses without panicking, as bash's and as zsh's command line,
// and the program source it names is one of the words.
func FuzzParseCommandLine(f *testing.F) {
	for _, s := range []string{"bash\x00-c\x00true", "bash\x00-lc", "-bash\x00-o", "sh\x00--rcfile", "bash\x00-c\x00x\x00n\x00a", "bash\x00-s\x00a", "bash\x00--\x00-c", "zsh\x00+s\x00f", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var argv []string
		if s != "" {
			argv = strings.Split(s, "\x00")
		}
		for _, cl := range []CommandLine{ParseCommandLine(argv), ParseZshCommandLine(argv)} {
			switch cl.Source {
			case FromString:
				if !slices.Contains(argv, cl.Command) {
					t.Fatalf("command %q is not a word of %q", cl.Command, argv)
				}
			case FromFile:
				if !slices.Contains(argv, cl.Script) {
					t.Fatalf("script %q is not a word of %q", cl.Script, argv)
				}
			}
			_, _ = planDirect(cl, argv, nil, "/")
		}
	})
}

// FuzzReadAuditLog: whatever the audit log holds (lines cut short, glued,
// binary, huge), reading it never panics and counts every line that is not
// empty as read or skipped; what it passes on are events.
func FuzzReadAuditLog(f *testing.F) {
	ev := `{"time":"2025-01-02T03:04:05Z","event":"exec.started","id":"abc","agent":"a","cwd":"/","command":"ls"}`
	f.Add(ev + "\n" + ev[:40] + "\n" + ev + "\n")
	f.Add(ev + ev + "\n\n" + ev)
	f.Add("\n\n{}\nnull\n[1]\n\"x\"\n" + ev[:len(ev)-1])
	f.Add("\xff\xfe{\x00}\r\n" + ev + "\r\n")
	f.Add(`{"event":"exec.finished","exitStatus":"x"}` + "\n")
	f.Fuzz(func(t *testing.T, data string) {
		lines := 0
		for l := range strings.SplitSeq(data, "\n") {
			if l != "" {
				lines++
			}
		}
		passed := 0
		n, st, err := readEvents(strings.NewReader(data), time.Time{}, true, func(ev Event, raw []byte) error {
			passed++
			if ev.Event == "" {
				t.Errorf("passed on a line that is no event: %q", raw)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n != int64(len(data)) {
			t.Errorf("consumed %d of %d bytes", n, len(data))
		}
		if st.Read+st.Skipped != lines {
			t.Errorf("%d lines, %d read + %d skipped", lines, st.Read, st.Skipped)
		}
		if passed != st.Read {
			t.Errorf("%d read, %d passed on", st.Read, passed)
		}
		// Following (no final line) leaves out only a last line without
		// its newline.
		open := 0
		if i := strings.LastIndexByte(data, '\n'); i < len(data)-1 {
			open = 1
		}
		_, st2, err := readEvents(strings.NewReader(data), time.Time{}, false, func(Event, []byte) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		if st2.Read+st2.Skipped != lines-open {
			t.Errorf("following: %+v of %d lines, %d of them open", st2, lines, open)
		}
	})
}
