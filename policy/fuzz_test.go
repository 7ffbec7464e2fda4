package policy

import (
	"testing"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/pattern"
)

// FuzzEvaluate feeds arbitrary text to the whole pipeline: parse, classify,
// match, decide. It must never panic, must always produce a valid risk and
// decision, and must never call something safe that it could not analyze.
func FuzzEvaluate(f *testing.F) {
	for _, c := range loadCorpus(f) {
		f.Add(c.command)
	}
	e := testEngine(f)
	pol := config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1, AutoAllowSafe: true}
	allow := pattern.NewMatcher(entries("git **", "npm run *", "ls", "/usr/bin/env **", "* --version"), fakePath)
	deny := pattern.NewMatcher(entries("rm -rf /", "terraform destroy **"), fakePath)
	f.Fuzz(func(t *testing.T, command string) {
		res := e.Evaluate(Request{Command: command, Cwd: testWorkspace, Home: testHome, Policy: pol, Allow: allow, Deny: deny})
		if res.Risk < Safe || res.Risk > Dangerous {
			t.Fatalf("risk %d out of range for %q", res.Risk, command)
		}
		switch res.Decision {
		case Allow, AskHuman, Deny:
		default:
			t.Fatalf("decision %q for %q", res.Decision, command)
		}
		if res.ParseError != "" && res.Risk == Safe {
			t.Fatalf("unparsable %q called safe", command)
		}
		if res.Opaque && res.Decision == Allow {
			t.Fatalf("opaque %q allowed under the allowlist policy", command)
		}
		for _, s := range res.Segments {
			if s.Risk != Safe && len(s.Reasons) == 0 {
				t.Fatalf("segment %q of %q is %s without a reason", s.Text, command, s.Risk)
			}
			if s.Argv == nil && s.Risk == Safe {
				t.Fatalf("dynamic segment %q of %q called safe", s.Text, command)
			}
			if res.Risk < s.Risk {
				t.Fatalf("command %q is less risky than its segment %q", command, s.Text)
			}
		}
	})
}
