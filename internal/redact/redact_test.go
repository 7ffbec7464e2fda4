package redact

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// secretPart is the part of a rule's example that must not survive: the
// value after the header for the rules that keep a header readable.
func secretPart(r rule) string {
	m := r.re.FindStringSubmatchIndex(r.example)
	if len(m) >= 4 && m[2] >= 0 {
		return r.example[m[2]:m[3]]
	}
	return r.example[m[0]:m[1]]
}

// TestExamples: every stream rule has an example for other packages.
func TestExamples(t *testing.T) {
	names := map[string]bool{}
	for _, e := range Examples() {
		names[e.Name] = true
		assert.Contains(t, e.Text, e.Secret)
		assert.NotContains(t, String(e.Text), e.Secret)
	}
	for _, r := range compiledRules.get() {
		assert.True(t, names[r.name], r.name)
	}
}

// TestRules: every example is replaced by its rule's marker, in any
// surroundings; every near miss is left as it is.
func TestRules(t *testing.T) {
	for _, r := range compiledRules.get() {
		t.Run(r.name, func(t *testing.T) {
			require.True(t, r.re.MatchString(r.example), "the example must match its own rule")
			secret := secretPart(r)
			for _, around := range []string{"%s", "token: %s\n", "{\"k\":\"%s\"}", "line one\n%s\nline three"} {
				in := strings.Replace(around, "%s", r.example, 1)
				got := String(in)
				assert.NotContains(t, got, secret, "in %q", in)
				assert.Contains(t, got, marker(r.name), "in %q", in)
			}
			assert.Equal(t, r.nearMiss, String(r.nearMiss), "near miss")
		})
	}
}

// TestHeaderStays: the rules with a header keep it, so the log still says
// what was sent.
func TestHeaderStays(t *testing.T) {
	assert.Equal(t, "curl -H 'Authorization: Bearer [REDACTED:authorization]' https://api",
		String("curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc' https://api"))
	assert.Equal(t, `{"authorization": "[REDACTED:github-token]"}`, String(`{"authorization": "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"}`))
	assert.Equal(t, "aws_secret_access_key = [REDACTED:aws-secret-key]\n",
		String("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"))
	assert.Equal(t, "key:\n[REDACTED:private-key]\ndone\n", String("key:\n"+ruleTable[0].example+"\ndone\n"))
}

// stream redacts in through a Writer, cut into the given pieces.
func stream(t testing.TB, pieces ...string) string {
	var out bytes.Buffer
	w := NewWriter(&out)
	for _, p := range pieces {
		n, err := w.Write([]byte(p))
		require.NoError(t, err)
		require.Equal(t, len(p), n)
	}
	require.NoError(t, w.Close())
	return out.String()
}

// TestWriterSplit: a secret cut by a write boundary at any byte is still
// redacted, and text without secrets passes through unchanged.
func TestWriterSplit(t *testing.T) {
	for _, r := range compiledRules.get() {
		if r.wholeOnly {
			continue
		}
		secret := secretPart(r)
		in := "before\n" + r.example + " after\n"
		for i := 1; i < len(in); i++ {
			got := stream(t, in[:i], in[i:])
			assert.NotContains(t, got, secret, "%s split at %d: %q", r.name, i, got)
			assert.Contains(t, got, marker(r.name), "%s split at %d", r.name, i)
		}
		byByte := make([]string, len(in))
		for i := range in {
			byByte[i] = in[i : i+1]
		}
		assert.Equal(t, String(in), stream(t, byByte...), "%s one byte at a time", r.name)
	}
	plain := strings.Repeat("nothing secret here, sk- and AKIA alone\n", 1000)
	assert.Equal(t, plain, stream(t, plain[:777], plain[777:20000], plain[20000:]))
}

// TestWriterLongLine: a line longer than the window is passed on in
// parts, and a token in it is found wherever the writes cut it.
func TestWriterLongLine(t *testing.T) {
	token := "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"
	line := strings.Repeat("x", 3*window) + " " + token + " " + strings.Repeat("y", 3*window)
	var out bytes.Buffer
	w := NewWriter(&out)
	for i := 0; i < len(line); i += 1000 {
		_, err := w.Write([]byte(line[i:min(i+1000, len(line))]))
		require.NoError(t, err)
		assert.LessOrEqual(t, len(w.held), window+1000, "held back at most the window and one write")
	}
	require.NoError(t, w.Close())
	assert.Equal(t, String(line), out.String())
	assert.NotContains(t, out.String(), token)
}

// TestWriterKeyAcrossWrites: a private key larger than the window, fed in
// small writes, is dropped whole, END line included.
func TestWriterKeyAcrossWrites(t *testing.T) {
	body := strings.Repeat(strings.Repeat("QUJDREVGR0hJSktMTU5PUA", 3)+"\n", 200) // ~13 KB
	in := "start\n-----BEGIN OPENSSH PRIVATE KEY-----\n" + body + "-----END OPENSSH PRIVATE KEY-----\nend\n"
	var pieces []string
	for i := 0; i < len(in); i += 100 {
		pieces = append(pieces, in[i:min(i+100, len(in))])
	}
	got := stream(t, pieces...)
	assert.Equal(t, "start\n[REDACTED:private-key]\nend\n", got)
	assert.Equal(t, got, String(in))
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, assert.AnError }

// TestWriterError: a failing destination fails the Writer for good.
func TestWriterError(t *testing.T) {
	w := NewWriter(failWriter{})
	_, err := w.Write([]byte("a line\n"))
	require.ErrorIs(t, err, assert.AnError)
	_, err = w.Write([]byte("more\n"))
	require.ErrorIs(t, err, assert.AnError)
	require.ErrorIs(t, w.Close(), assert.AnError)
}
