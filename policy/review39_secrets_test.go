package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSecretNamesToolsUse: keys named for what they let one do (an auth
// key, an app's or admin's key, a deploy or SSH key, a service role's),
// a CLI's session (Bitwarden's BW_SESSION, 1Password's OP_SESSION_x,
// fastlane's), and a framework's "public" variable whose name says it is
// a password, a secret or a private key, are withheld from a confined
// command that reaches the allowed hosts; keys that name no credential
// (CACHE_KEY, PRIMARY_KEY) and a framework's public keys still reach it.
func TestSecretNamesToolsUse(t *testing.T) {
	secret := []string{
		"TS_AUTHKEY", "TAILSCALE_AUTHKEY", "DD_APP_KEY", "DATADOG_APP_KEY", "APP_KEY", "ALGOLIA_ADMIN_KEY",
		"B2_APPLICATION_KEY", "CYPRESS_RECORD_KEY", "SSH_KEY", "DEPLOY_KEY", "GCP_SA_KEY", "SUPABASE_SERVICE_ROLE_KEY",
		"SOPS_AGE_KEY", "ORG_GRADLE_PROJECT_signingInMemoryKey", "BW_SESSION", "OP_SESSION_my", "FASTLANE_SESSION",
		"PUBLIC_KEY_PASSWORD", "PUBLIC_SSH_PRIVATE_KEY", "VITE_CLIENT_SECRET", "GATSBY_PREVIEW_SECRET",
		"PUBLIC_SUPABASE_SERVICE_ROLE_KEY", "NEXT_PUBLIC_DB_PASS",
	}
	public := []string{
		"CACHE_KEY", "PRIMARY_KEY", "SORT_KEY", "GPG_KEY_ID", "PUBLIC_KEY", "XDG_SESSION_TYPE", "XDG_SESSION_ID",
		"NEXT_PUBLIC_MAPS_API_KEY", "PUBLIC_SUPABASE_ANON_KEY", "VITE_STRIPE_PUBLISHABLE_KEY", "REACT_APP_APP_KEY_ID",
		"SOPS_AGE_KEY_FILE_DIR", "HOME", "APPDATA",
	}
	var env []string
	for _, n := range append(append([]string{}, secret...), public...) {
		env = append(env, n+"=x")
	}
	assert.ElementsMatch(t, secret, SecretVariables(env))
}
