package policy

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Secrets clouds, CI systems and frameworks keep under names the
// prints-secret pattern missed, or in a URL's user part under a name that
// says nothing (DATABASE_URL, GOPROXY with a token): a confined command
// that reached the allowed hosts got them. And what is no secret keeps
// reaching it.
func TestSecretVariablesByNameAndValue(t *testing.T) {
	secret := []string{
		"DATABASE_URL=postgres://app:hunter2@db.internal:5432/app",
		"GOPROXY=https://ci:tok3n@goproxy.corp.example,direct",
		"REDIS_URL=redis://:hunter2@cache:6379/0",
		"SENTRY_DSN=https://abc123@o1.ingest.sentry.io/42",
		"DB_PASS=hunter2",
		"MYSQL_PWD=hunter2",
		"GPG_PASSPHRASE=hunter2",
		"RAILS_MASTER_KEY=0123456789abcdef",
		"ORG_GRADLE_PROJECT_signingKey=-----BEGIN PGP",
		"AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=a;AccountKey=k",
		"AZURE_STORAGE_KEY=k",
		"CI_JOB_JWT=eyJhbGciOi",
		"SLACK_WEBHOOK_URL=https://hooks.slack.com/services/T/B/X",
	}
	public := []string{
		"HOME=/h", "PATH=/bin", "PWD=/h/w", "OLDPWD=/h", "LANG=C.UTF-8", "GOFLAGS=-mod=mod",
		"GOPROXY_OTHER=https://proxy.golang.org,direct", "REPO=https://github.com/o/r", "PASSENGER_ENV=1",
		// built into every visitor's page by the framework: public by design
		"NEXT_PUBLIC_MAPS_API_KEY=AIza", "VITE_STRIPE_PUBLISHABLE_KEY=pk_test", "NEXT_PUBLIC_SENTRY_DSN=https://abc@o1.ingest.sentry.io/1",
		"REACT_APP_API_KEY=x", "PUBLIC_SUPABASE_ANON_KEY=x",
	}
	var want []string
	for _, kv := range secret {
		name, _, _ := strings.Cut(kv, "=")
		want = append(want, name)
	}
	assert.ElementsMatch(t, want, SecretVariables(append(append([]string{}, secret...), public...)))
}

// FuzzCarriesUserinfo: a URL that net/url reads with a user part is
// always found, alone or in a list; nothing panics.
func FuzzCarriesUserinfo(f *testing.F) {
	for _, s := range []string{"postgres://a:b@h/d", "https://t@h", "https://h/p@q", "x", "a://@", "https://h,https://u:p@g|direct"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := carriesUserinfo(s)
		if u, err := url.Parse(s); err == nil && u.User != nil && u.Host != "" && !strings.ContainsAny(s, ",| \t\n") && strings.Contains(s, "://") {
			if !got {
				t.Errorf("%q has a user part (%q)", s, u.User)
			}
		}
		assert.Equal(t, got, carriesUserinfo("https://proxy.golang.org,"+s))
	})
}
