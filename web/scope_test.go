package web

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/hub"
)

func TestScopePatterns(t *testing.T) {
	props := []hub.SegmentProposal{{Patterns: []string{"a $", "a **"}}, {Patterns: []string{"b $"}}, {}}
	got, err := scopePatterns(props, []int{1, -1, -1})
	require.NoError(t, err)
	assert.Equal(t, []string{"a **", "", ""}, got)
	for _, bad := range [][]int{{2, 0, -1}, {0, 0, 0}, {0, -2, -1}, {0, 0}} {
		_, err := scopePatterns(props, bad)
		assert.Error(t, err, "%v", bad)
	}
}
