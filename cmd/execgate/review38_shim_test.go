package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Code that runs confined and reaches the agent's allowed hosts got the
// secrets of the environment whose names the prints-secret pattern missed
// (DB_PASS, MYSQL_PWD, GPG_PASSPHRASE, CI_JOB_JWT) or whose value carries
// them (DATABASE_URL and GOPROXY with a user and password): an allowed
// host that takes uploads carries them off. It runs without them.
func TestConfinedWithProxyGetsNoSecretByValue(t *testing.T) {
	requireConfinement(t)
	script := `import os
print(",".join(os.environ.get(k, "-") for k in ("DATABASE_URL", "GOPROXY", "DB_PASS", "MYSQL_PWD", "GPG_PASSPHRASE", "CI_JOB_JWT", "OTHER")))
`
	e := newShimEnv(t, `{"version": 1, "agents": {"*": {"sandbox": {"hosts": ["proxy.golang.org"]}}}}`)
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "env.py"), []byte(script), 0o644))
	e.env = append(e.env, "DATABASE_URL=postgres://app:db_canary@db.internal/app", "GOPROXY=https://ci:goproxy_canary@goproxy.corp.example,direct",
		"DB_PASS=pass_canary", "MYSQL_PWD=pwd_canary", "GPG_PASSPHRASE=gpg_canary", "CI_JOB_JWT=jwt_canary", "OTHER=kept")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", "python3 env.py"), "")
	require.Equal(t, 0, o.status, "%+v", o)
	assert.Equal(t, "-,-,-,-,-,-,kept\n", o.stdout)
}
