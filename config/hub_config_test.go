package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRequesterUids(t *testing.T) {
	tests := []struct {
		name     string
		raw      string
		want     []int
		warnings []string
	}{
		{name: "absent", raw: `{"socket":{"path":"/run/h.sock"}}`},
		{name: "null", raw: `{"socket":{"requesterUids":null}}`},
		{name: "empty", raw: `{"socket":{"requesterUids":[]}}`},
		{name: "valid", raw: `{"socket":{"requesterUids":[1001, 0, 4294967294]}}`, want: []int{1001, 0, 4294967294}},
		{name: "duplicates kept once", raw: `{"socket":{"requesterUids":[1001,1001,1002]}}`, want: []int{1001, 1002}},
		{name: "not an array", raw: `{"socket":{"requesterUids":1001}}`,
			warnings: []string{"socket.requesterUids: want an array of user ids, got number 1001; ignoring it"}},
		{name: "bad entries dropped",
			raw:  `{"socket":{"requesterUids":[-1, 1.5, "1001", 4294967295, 1e3, null, 1003]}}`,
			want: []int{1003},
			warnings: []string{
				"socket.requesterUids[0]: want a user id (a whole number from 0 to 4294967294), got number -1; ignoring it",
				"socket.requesterUids[1]: want a user id (a whole number from 0 to 4294967294), got number 1.5; ignoring it",
				`socket.requesterUids[2]: want a user id (a whole number from 0 to 4294967294), got string "1001"; ignoring it`,
				"socket.requesterUids[3]: want a user id (a whole number from 0 to 4294967294), got number 4294967295; ignoring it",
				"socket.requesterUids[4]: want a user id (a whole number from 0 to 4294967294), got number 1e3; ignoring it",
				"socket.requesterUids[5]: want a user id (a whole number from 0 to 4294967294), got null; ignoring it",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, warnings, err := ParseConfig([]byte(tt.raw))
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg.Socket.RequesterUids)
			assert.Equal(t, tt.warnings, warnings)
		})
	}
}

// A Store edit keeps requesterUids, and Replace takes them from the new
// file (only path and token are pinned).
func TestRequesterUidsSurviveEdits(t *testing.T) {
	d := docFrom(t, `{"socket":{"token":"t","requesterUids":[1001]}}`)
	require.NoError(t, d.SetPolicyField("", "security", "deny"))
	assert.Equal(t, []int{1001}, docConfig(t, d).Socket.RequesterUids)
	require.NoError(t, d.Replace([]byte(`{"socket":{"token":"stolen","requesterUids":[1002]}}`)))
	cfg := docConfig(t, d)
	assert.Equal(t, []int{1002}, cfg.Socket.RequesterUids)
	assert.Equal(t, "t", cfg.Socket.Token)
}

func TestParseIdleTimeout(t *testing.T) {
	const want = "socket.idleTimeoutMs: want a whole number of milliseconds from 1000 to 86400000, got "
	tests := []struct {
		name    string
		raw     string
		want    int
		warning string
	}{
		{name: "absent", raw: `{"socket":{}}`},
		{name: "null", raw: `{"socket":{"idleTimeoutMs":null}}`},
		{name: "valid", raw: `{"socket":{"idleTimeoutMs":60000}}`, want: 60_000},
		{name: "bounds", raw: `{"socket":{"idleTimeoutMs":1000}}`, want: 1000},
		{name: "too short", raw: `{"socket":{"idleTimeoutMs":999}}`, warning: want + "number 999; using the hub's default"},
		{name: "zero", raw: `{"socket":{"idleTimeoutMs":0}}`, warning: want + "number 0; using the hub's default"},
		{name: "too long", raw: `{"socket":{"idleTimeoutMs":86400001}}`, warning: want + "number 86400001; using the hub's default"},
		{name: "fraction", raw: `{"socket":{"idleTimeoutMs":1500.5}}`, warning: want + "number 1500.5; using the hub's default"},
		{name: "string", raw: `{"socket":{"idleTimeoutMs":"60000"}}`, warning: want + `string "60000"; using the hub's default`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, warnings, err := ParseConfig([]byte(tt.raw))
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg.Socket.IdleTimeoutMs)
			if tt.warning == "" {
				assert.Empty(t, warnings)
			} else {
				assert.Equal(t, []string{tt.warning}, warnings)
			}
		})
	}
}
