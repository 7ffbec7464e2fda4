package redact

import "regexp"

// rule is one known token shape.
type rule struct {
	// name goes into the marker: [REDACTED:name].
	name string
	// expr matches the token. With a capturing group, only group 1 is the
	// secret (the header name or key name before it stays readable);
	// without one, the whole match is.
	expr string
	// wordStart says a match must start at a word boundary (\b), checked
	// by hand so that expr can be anchored at a hint.
	wordStart bool
	// hints are lower-case strings of which every match contains one: a
	// text with none of them is not searched, which keeps the common case
	// (no secret at all) at memory speed. Unless the rule is open or
	// wholeOnly, every match starts with a hint, and expr is only tried,
	// anchored, where one occurs.
	hints []string
	// re is expr, with \b in front for wordStart; anchored is expr that
	// must match at the start of the text. Both are set only in the
	// compiled copy of the table (compiledRules).
	re, anchored *regexp.Regexp
	// open marks a shape with no bounded length (a private-key block):
	// the streaming Writer cuts inside it and removes the rest with cont
	// instead of holding it back.
	open bool
	// notSecret, if set, matches a captured value that is no secret after
	// all (a scheme name standing alone, its credential already a
	// marker): such a match is left alone.
	notSecret *regexp.Regexp
	// notSecretExpr is the source of notSecret.
	notSecretExpr string
	// wholeOnly marks a shape that can only be judged with the whole text
	// in view (the end of a key block, whose body lines come before the
	// line that shows what they are): the streaming Writer skips it. A
	// stream is read from its start, where the BEGIN line is.
	wholeOnly bool
	// example must be redacted; nearMiss must be left alone (tests).
	example, nearMiss string
}

// Markers look like [REDACTED:aws-access-key]. '[' is in none of the
// token alphabets, so a marker never becomes part of a match: redacting
// twice changes nothing.
const (
	markerOpen  = "[REDACTED:"
	markerClose = "]"
)

// pemLabel is what stands between BEGIN/END and the dashes of a private
// key: "RSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "ENCRYPTED PRIVATE KEY",
// "PGP PRIVATE KEY BLOCK" …
const pemLabel = `[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?`

// pemBody is what a key's body holds: base64 lines and the headers of
// old encrypted PEM and of PGP armour.
const pemBody = `(?:[A-Za-z0-9+/=\s]|(?:Proc-Type|DEK-Info|Version|Comment):[^\r\n]*)*`

// keyCont removes the rest of a private key whose BEGIN line the Writer
// has already replaced: more body, then the END line if it comes.
// It is compiled on first use, as the rules are.
var keyCont = &lazy[*regexp.Regexp]{build: func() *regexp.Regexp {
	return regexp.MustCompile(`^` + pemBody + `(?:-----END ` + pemLabel + `-----)?`)
}}

// ruleTable holds the token shapes execgate removes from what it stores.
// Each is specific enough (a fixed prefix or a named header) that ordinary
// output does not trip it; secrets without a recognisable shape are not
// found, which is why credential-reading commands keep no output tail at
// all by default (see the shim).
//
// The table is static data: compiling its expressions costs milliseconds,
// more than bash takes to start, and the shim pays package initialisation
// on every command while most commands hold no hint of a secret. The
// expressions are compiled on first use (compiledRules).
var ruleTable = []rule{
	{
		name:     "private-key",
		expr:     `-----BEGIN ` + pemLabel + `-----` + pemBody + `(?:-----END ` + pemLabel + `-----)?`,
		hints:    []string{"-----begin "},
		open:     true,
		example:  "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn\n/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\n-----END RSA PRIVATE KEY-----",
		nearMiss: "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A\n-----END PUBLIC KEY-----",
	},
	{
		// The end of a key whose BEGIN line is not in the text: an output
		// tail that starts inside it. Whole body lines are 64 or 70
		// characters; asking for 16 keeps a short word before the key.
		name:      "private-key",
		expr:      `(?:[A-Za-z0-9+/=]{16,}\r?\n)*[A-Za-z0-9+/=]+\r?\n-----END ` + pemLabel + `-----`,
		hints:     []string{"-----end "},
		wholeOnly: true,
		example:   "yPB0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2\nAHB7MhgHcTz6==\n-----END OPENSSH PRIVATE KEY-----",
		nearMiss:  "AHB7MhgHcTz6==\n-----END CERTIFICATE-----",
	},
	{
		name: "aws-access-key",
		expr: `(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b`,

		wordStart: true,
		hints:     []string{"akia", "asia", "abia", "acca", "a3t"},
		example:   "AKIAIOSFODNN7EXAMPLE",
		nearMiss:  "AKIAIOSFODNN7EXAMPL",
	},
	{
		name:     "aws-secret-key",
		expr:     `(?i)aws_?secret_?access_?key["']?[ \t]*[:=][ \t]*["']?([A-Za-z0-9/+=]{40})\b`,
		hints:    []string{"aws_secret", "awssecret"},
		example:  "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		nearMiss: "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG",
	},
	{
		name: "github-token",
		expr: `(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b`,

		wordStart: true,
		hints:     []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
		example:   "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",
		nearMiss:  "ghp_wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO",
	},
	{
		name: "gitlab-token",
		expr: `gl(?:pat|dt|rt|ptt|cbt|ft|soat)-[A-Za-z0-9_-]{20,255}`,

		wordStart: true,
		hints:     []string{"glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glft-", "glsoat-"},
		example:   "glpat-xT9qk2LmN8vB3cZ7wR1y",
		nearMiss:  "glpat-short-token",
	},
	{
		name: "slack-token",
		expr: `xox[abposr]-[A-Za-z0-9-]{10,255}|https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,255}`,

		wordStart: true,
		hints:     []string{"xox", "hooks.slack.com"},
		example:   "xoxb-2627382719-1528374625182-tq8XvN3kPz",
		nearMiss:  "xoxb-123",
	},
	{
		name:     "slack-webhook",
		expr:     `https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,255}`,
		hints:    []string{"https://hooks.slack.com/services/"},
		example:  "https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXXXXXXXXXX",
		nearMiss: "https://hooks.slack.com/services/",
	},
	{
		// Before openai-key, whose "sk-" it shares.
		name: "anthropic-key",
		expr: `sk-ant-[A-Za-z0-9_-]{20,255}`,

		wordStart: true,
		hints:     []string{"sk-ant-"},
		example:   "sk-ant-api03-Xk2mP9qL7vR4tN8wZ1cB6yH3jF5dS0aE",
		nearMiss:  "sk-ant-short",
	},
	{
		// Project, service-account and admin keys, and the older plain
		// ones (letters and digits only, so a hyphenated word does not
		// match).
		name: "openai-key",
		expr: `sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,255}|[A-Za-z0-9]{32,255})\b`,

		wordStart: true,
		hints:     []string{"sk-"},
		example:   "sk-proj-Ab3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY",
		nearMiss:  "sk-learn-is-a-python-machine-learning-library",
	},
	{
		// The credential after the scheme; the header and scheme stay.
		// A value starting with '[' is a marker already.
		name:          "authorization",
		expr:          `(?i)authorization["']?[ \t]*[:=][ \t]*["']?(?:(?:bearer|basic|token|bot|digest|negotiate|ntlm)[ \t]+)?([^\s"'\[][^\s"']{0,1000})`,
		hints:         []string{"authorization"},
		wordStart:     true,
		notSecretExpr: `(?i)^(?:bearer|basic|token|bot|digest|negotiate|ntlm)$`,
		example:       "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc' https://api",
		nearMiss:      "the authorization model is described below",
	},
}

// compiledRules is ruleTable with its expressions compiled, built once,
// when a text first holds a hint.
var compiledRules = &lazy[[]rule]{build: func() []rule { return compile(ruleTable) }}

// compile returns a copy of table with each rule's expressions built from its
// expr.
func compile(table []rule) []rule {
	rs := append([]rule(nil), table...)
	for i := range rs {
		r := &rs[i]
		full := r.expr
		if r.wordStart {
			full = `\b(?:` + full + `)`
		}
		r.re = regexp.MustCompile(full)
		r.anchored = regexp.MustCompile(`^(?:` + r.expr + `)`)
		if r.notSecretExpr != "" {
			r.notSecret = regexp.MustCompile(r.notSecretExpr)
		}
	}
	return rs
}
