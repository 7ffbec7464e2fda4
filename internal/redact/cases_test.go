package redact

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// ruleCase is one input for one rule: a positive is redacted by that rule
// (its secret gone, its marker there); a negative is a near miss of the
// same shape, left exactly as it is. The tokens are made up for these
// tests: right length and alphabet, no real credential.
type ruleCase struct {
	rule string
	// hint is the alternative of the rule this case exercises (one of its
	// hints, or a scheme of the authorization rule); every hint must have
	// a positive case.
	hint string
	in   string
	// secret is the part that must not survive a positive.
	secret string
	// negative cases must come back unchanged.
	negative bool
}

// fill returns n characters of a token alphabet, deterministic and
// varied, so that each case reads as the shape it stands for.
func fill(n int) string {
	const alphabet = "Qm7xR2vK9pL4tZ8wN3cB6yH1jF5dS0aEgUoIe"
	var b strings.Builder
	for i := range n {
		b.WriteByte(alphabet[(i*7+3)%len(alphabet)])
	}
	return b.String()
}

// upperFill is fill for the upper-case-and-digits AWS alphabet.
func upperFill(n int) string {
	return strings.ToUpper(strings.NewReplacer("a", "", "e", "").Replace(fill(n * 2)))[:n]
}

var ruleCases = func() []ruleCase {
	tok36 := fill(36)
	aws16 := upperFill(16)
	var cs []ruleCase
	pos := func(rule, hint, in, secret string) {
		cs = append(cs, ruleCase{rule: rule, hint: hint, in: in, secret: secret})
	}
	neg := func(rule, hint, in string) {
		cs = append(cs, ruleCase{rule: rule, hint: hint, in: in, negative: true})
	}

	// AWS access key ids: long-term (AKIA), temporary (ASIA), the other
	// documented prefixes.
	for _, p := range []string{"AKIA", "ASIA", "ABIA", "ACCA"} {
		pos("aws-access-key", strings.ToLower(p), "export AWS_ACCESS_KEY_ID="+p+aws16, p+aws16)
		neg("aws-access-key", strings.ToLower(p), "id "+p+aws16[:15]+" is one short")
		neg("aws-access-key", strings.ToLower(p), "X"+p+aws16+" starts inside a word")
	}
	pos("aws-access-key", "a3t", "key A3TX"+aws16, "A3TX"+aws16)
	neg("aws-access-key", "a3t", "key A3T-"+aws16)
	neg("aws-access-key", "asia", "ASIB"+aws16)

	pos("aws-secret-key", "aws_secret", `aws_secret_access_key: "`+fill(40)+`"`, fill(40))
	pos("aws-secret-key", "awssecret", "AWSSecretAccessKey="+fill(40), fill(40))
	neg("aws-secret-key", "aws_secret", "aws_secret_access_key = "+fill(39))

	// GitHub: personal (ghp_), OAuth (gho_), user-to-server (ghu_),
	// server-to-server (ghs_), refresh (ghr_), fine-grained PATs.
	for _, p := range []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"} {
		pos("github-token", p, "token="+p+tok36, p+tok36)
		neg("github-token", p, "token="+p+tok36[:35])
	}
	neg("github-token", "ghs_", "ghx_"+tok36)
	pos("github-token", "github_pat_", "GH_TOKEN=github_pat_"+fill(22)+"_"+fill(59), "github_pat_"+fill(22)+"_"+fill(59))
	neg("github-token", "github_pat_", "github_pat_"+fill(21))

	for _, p := range []string{"glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glft-", "glsoat-"} {
		pos("gitlab-token", p, "PRIVATE-TOKEN: "+p+fill(20), p+fill(20))
		neg("gitlab-token", p, p+fill(19))
	}
	neg("gitlab-token", "glpat-", "xglpat-"+fill(20))

	// Slack: bot, user, app-level, workspace-refresh and the others of
	// the xox family.
	for _, p := range []string{"xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-"} {
		pos("slack-token", "xox", "SLACK_TOKEN="+p+"1234567890-"+fill(12), p+"1234567890-"+fill(12))
		neg("slack-token", "xox", p+"123456789")
	}
	neg("slack-token", "xox", "xoxz-1234567890-"+fill(12))
	hook := "https://hooks.slack.com/services/T0" + fill(8) + "/B0" + fill(8) + "/" + fill(24)
	pos("slack-token", "hooks.slack.com", "curl -X POST "+hook, hook)
	neg("slack-token", "hooks.slack.com", "https://hooks.slack.com/services/T0/B0")
	pos("slack-webhook", "https://hooks.slack.com/services/", "url: "+hook, hook)
	neg("slack-webhook", "https://hooks.slack.com/services/", "see https://hooks.slack.com/services/ for the docs")

	pos("anthropic-key", "sk-ant-", "ANTHROPIC_API_KEY=sk-ant-api03-"+fill(40), "sk-ant-api03-"+fill(40))
	neg("anthropic-key", "sk-ant-", "sk-ant-"+fill(19))

	for _, kind := range []string{"proj", "svcacct", "admin"} {
		pos("openai-key", "sk-", "OPENAI_API_KEY=sk-"+kind+"-"+fill(40), "sk-"+kind+"-"+fill(40))
		neg("openai-key", "sk-", "sk-"+kind+"-"+fill(19))
	}
	pos("openai-key", "sk-", "key sk-"+fill(48), "sk-"+fill(48))
	neg("openai-key", "sk-", "sk-"+fill(31))
	neg("openai-key", "sk-", "pip install sk-learn-helpers-for-everyone-and-more")

	// Authorization: every scheme keeps its name, the credential goes;
	// a header with only a scheme (or about authorization in prose) stays.
	cred := fill(32)
	for _, scheme := range []string{"Bearer", "Basic", "Token", "Bot", "Digest", "Negotiate", "NTLM"} {
		pos("authorization", strings.ToLower(scheme), "curl -H 'Authorization: "+scheme+" "+cred+"' https://api.example", cred)
		neg("authorization", strings.ToLower(scheme), "Authorization: "+scheme)
	}
	pos("authorization", "authorization", `{"authorization": "`+cred+`"}`, cred)
	pos("authorization", "authorization", "authorization="+cred, cred)
	neg("authorization", "authorization", "the authorization model is described below")
	neg("authorization", "authorization", "preauthorization: "+cred)

	key := "-----BEGIN OPENSSH PRIVATE KEY-----\n" + fill(70) + "\n" + fill(40) + "==\n-----END OPENSSH PRIVATE KEY-----"
	pos("private-key", "-----begin ", "id_ed25519:\n"+key+"\n", fill(70))
	enc := "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00FF\n\n" + fill(64) + "\n-----END RSA PRIVATE KEY-----"
	pos("private-key", "-----begin ", enc, fill(64))
	pos("private-key", "-----begin ", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"+fill(64)+"\n-----END PGP PRIVATE KEY BLOCK-----", fill(64))
	neg("private-key", "-----begin ", "-----BEGIN CERTIFICATE-----\n"+fill(64)+"\n-----END CERTIFICATE-----")
	pos("private-key", "-----end ", "tail of a key:\n"+fill(64)+"\n"+fill(20)+"==\n-----END PRIVATE KEY-----\n", fill(64))
	neg("private-key", "-----end ", fill(64)+"\n-----END PUBLIC KEY-----")
	return cs
}()

// TestRuleCases runs the case table: every positive is redacted with its
// secret gone, and its own rule's expression, alone, matches the secret
// (rules overlap: a Slack webhook is redacted under slack-webhook, so
// only this checks slack-token's own webhook branch); every near miss is
// left as it is.
func TestRuleCases(t *testing.T) {
	rules := compiledRules.get()
	for _, c := range ruleCases {
		got := String(c.in)
		if c.negative {
			assert.Equal(t, c.in, got, "%s (%s): a near miss must stay", c.rule, c.hint)
			continue
		}
		assert.NotContains(t, got, c.secret, "%s (%s): %q", c.rule, c.hint, c.in)
		assert.Contains(t, got, markerOpen, "%s (%s): %q", c.rule, c.hint, c.in)
		assert.True(t, ownRuleCovers(rules, c), "%s (%s): the rule's own expression does not match %q in %q", c.rule, c.hint, c.secret, c.in)
	}
}

// ownRuleCovers reports whether one of the rules named c.rule, alone,
// matches a stretch of c.in that holds c.secret.
func ownRuleCovers(rules []rule, c ruleCase) bool {
	at := strings.Index(c.in, c.secret)
	for _, r := range rules {
		if r.name != c.rule {
			continue
		}
		for _, m := range r.re.FindAllStringIndex(c.in, -1) {
			if m[0] <= at && at+len(c.secret) <= m[1] {
				return true
			}
		}
	}
	return false
}

// TestRuleCasesCoverTheTable: every rule has positive and negative cases,
// and every hint of every rule (each prefix a token can start with) a
// positive one, so a rule, or one alternative of it, that stops matching
// fails TestRuleCases; a hint added without a case fails here.
func TestRuleCasesCoverTheTable(t *testing.T) {
	type key struct{ rule, hint string }
	positive := map[key]bool{}
	rules := map[string][2]int{}
	for _, c := range ruleCases {
		n := rules[c.rule]
		if c.negative {
			n[1]++
		} else {
			n[0]++
			positive[key{c.rule, c.hint}] = true
		}
		rules[c.rule] = n
	}
	for _, r := range ruleTable {
		n := rules[r.name]
		assert.Positive(t, n[0], "rule %s has no positive case", r.name)
		assert.Positive(t, n[1], "rule %s has no near miss", r.name)
		for _, h := range r.hints {
			assert.True(t, positive[key{r.name, h}], "rule %s: hint %q has no positive case", r.name, h)
		}
	}
	// The authorization rule's schemes are alternatives too.
	for _, s := range []string{"bearer", "basic", "token", "bot", "digest", "negotiate", "ntlm"} {
		assert.True(t, positive[key{"authorization", s}], "authorization scheme %s has no case", s)
		assert.Contains(t, strings.ToLower(ruleTable[len(ruleTable)-1].expr), s)
	}
}
