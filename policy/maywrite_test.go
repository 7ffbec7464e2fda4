package policy

import "testing"

// TestMayWrite: only a program proven read-only skips the checkpoint.
func TestMayWrite(t *testing.T) {
	e, err := NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		command string
		want    bool
	}{
		{"ls -la", false},
		{"cat a | grep b", false},
		{"git status", false},
		{"echo hi > f", true},
		{"rm -rf src", true},
		{"git checkout -- .", true},
		{"make", true},
		{"sed -i s/a/b/ f", true},
		{"eval \"$x\"", true},
		{"echo 'unterminated", true},
	} {
		r := e.Analyze(Request{Command: tt.command, Cwd: "/work/w", Home: "/home/u"})
		if got := r.MayWrite(); got != tt.want {
			t.Errorf("%q: MayWrite() = %v, want %v (risk %v)", tt.command, got, tt.want, r.Risk)
		}
	}
}
