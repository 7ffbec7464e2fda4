package doctor

import (
	"context"
	"strings"
	"testing"

	"github.com/execgate/execgate/sandbox"
)

// Where commands run confined, doctor says whether what they leave
// running is tracked, and a warning says how to make it so.
func TestLeftoversCheck(t *testing.T) {
	o := Options{Environ: []string{"PATH=/usr/bin:/bin"}}
	c, ok := o.leftovers()
	if !sandbox.Probe(o.getenv).Supported() {
		if ok {
			t.Fatalf("a check where nothing is confined: %+v", c)
		}
		return
	}
	if !ok {
		t.Fatal("no check where commands run confined")
	}
	_, err := sandbox.ProbeGroups()
	switch {
	case err == nil && (c.Status != OK || !strings.Contains(c.Text, "tracked in cgroups under")):
		t.Errorf("groups can be made, but: %+v", c)
	case err != nil && (c.Status != Warn || !strings.Contains(c.Text, err.Error()) || c.Fix == ""):
		t.Errorf("no groups (%v), but: %+v", err, c)
	}
	var found bool
	for _, c := range Run(context.Background(), o) {
		found = found || strings.Contains(c.Text, "processes confined commands leave running")
	}
	if !found {
		t.Error("Run does not include the check")
	}
}
