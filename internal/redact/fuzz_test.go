package redact

import (
	"bytes"
	"testing"
)

// leftover returns the first secret shape still in text, if any.
func leftover(text []byte, stream bool) string {
	for _, r := range compiledRules.get() {
		if stream && r.wholeOnly {
			continue
		}
		for _, m := range r.re.FindAllSubmatch(text, -1) {
			if len(m) > 1 && r.notSecret != nil && r.notSecret.Match(m[1]) {
				continue
			}
			return r.name + ": " + string(m[0])
		}
	}
	return ""
}

// FuzzRedact: redaction never panics, is idempotent, and leaves no shape
// it knows, whole or streamed in writes of any sizes.
func FuzzRedact(f *testing.F) {
	for _, r := range compiledRules.get() {
		f.Add([]byte(r.example), []byte{3, 7})
		f.Add([]byte("x "+r.example+"\n"+r.example), []byte{1})
		f.Add([]byte(r.nearMiss), []byte{})
	}
	f.Add([]byte("Authorization: Bearer sk-ant-api03-Xk2mP9qL7vR4tN8wZ1cB6yH3jF5dS0aE AKIAIOSFODNN7EXAMPLE"), []byte{5, 200})
	f.Fuzz(func(t *testing.T, text, cuts []byte) {
		once := Bytes(text)
		if twice := Bytes(once); !bytes.Equal(once, twice) {
			t.Fatalf("not idempotent:\n%q\n%q\n%q", text, once, twice)
		}
		if l := leftover(once, false); l != "" {
			t.Fatalf("left %q in %q (from %q)", l, once, text)
		}
		var out bytes.Buffer
		w := NewWriter(&out)
		rest := text
		for _, c := range cuts {
			n := min(int(c), len(rest))
			if _, err := w.Write(rest[:n]); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if _, err := w.Write(rest); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if l := leftover(out.Bytes(), true); l != "" {
			t.Fatalf("stream left %q in %q (from %q, cuts %v)", l, out.Bytes(), text, cuts)
		}
	})
}
