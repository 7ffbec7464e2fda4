package prompt

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fake is an Asker that records its calls and returns a fixed result.
type fake struct {
	ans   Answer
	err   error
	calls int
}

func (f *fake) Ask(ctx context.Context, r Request) (Answer, error) {
	f.calls++
	return f.ans, f.err
}

func unavailable(why string) *fake {
	return &fake{err: errors.Join(ErrUnavailable, errors.New(why))}
}

func TestChain(t *testing.T) {
	t.Parallel()
	hubAnswer := Answer{Decision: AllowAlways, By: "hub"}
	ttyAnswer := Answer{Decision: AllowOnce, By: "tty"}
	broken := errors.New("hub went away mid-request")

	tests := []struct {
		name      string
		chain     func() (Chain, []*fake)
		want      Answer
		wantErr   error // matched with errors.Is
		notErr    error // must not match
		wantCalls []int
	}{
		{
			name: "first answers, rest not asked",
			chain: func() (Chain, []*fake) {
				a, b := &fake{ans: hubAnswer}, &fake{ans: ttyAnswer}
				return Chain{a, b}, []*fake{a, b}
			},
			want: hubAnswer, wantCalls: []int{1, 0},
		},
		{
			name: "unavailable falls through",
			chain: func() (Chain, []*fake) {
				a, b := unavailable("no hub socket"), &fake{ans: ttyAnswer}
				return Chain{a, b}, []*fake{a, b}
			},
			want: ttyAnswer, wantCalls: []int{1, 1},
		},
		{
			name: "failure falls through",
			chain: func() (Chain, []*fake) {
				a, b := &fake{err: broken}, &fake{ans: ttyAnswer}
				return Chain{a, b}, []*fake{a, b}
			},
			want: ttyAnswer, wantCalls: []int{1, 1},
		},
		{
			name: "timeout is an answer",
			chain: func() (Chain, []*fake) {
				a, b := &fake{ans: Answer{Decision: Deny, By: "hub", TimedOut: true}}, &fake{ans: ttyAnswer}
				return Chain{a, b}, []*fake{a, b}
			},
			want: Answer{Decision: Deny, By: "hub", TimedOut: true}, wantCalls: []int{1, 0},
		},
		{
			name: "all unavailable",
			chain: func() (Chain, []*fake) {
				a, b := unavailable("no hub"), unavailable("no tty")
				return Chain{a, b}, []*fake{a, b}
			},
			wantErr: ErrUnavailable, wantCalls: []int{1, 1},
		},
		{
			name: "a failure is not unavailability",
			chain: func() (Chain, []*fake) {
				a, b := &fake{err: broken}, unavailable("no tty")
				return Chain{a, b}, []*fake{a, b}
			},
			wantErr: broken, notErr: ErrUnavailable, wantCalls: []int{1, 1},
		},
		{
			name:    "empty chain",
			chain:   func() (Chain, []*fake) { return nil, nil },
			wantErr: ErrUnavailable,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, fakes := tc.chain()
			got, err := c.Ask(t.Context(), Request{Command: "true"})
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				assert.Equal(t, Answer{}, got)
			} else {
				require.NoError(t, err)
				assert.Equal(t, tc.want, got)
			}
			if tc.notErr != nil {
				assert.NotErrorIs(t, err, tc.notErr)
			}
			for i, f := range fakes {
				assert.Equal(t, tc.wantCalls[i], f.calls, "calls to member %d", i)
			}
		})
	}
}

func TestChainStopsWhenContextEnds(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	first := &fake{err: context.Canceled}
	second := &fake{ans: Answer{Decision: AllowOnce, By: "tty"}}
	cancel()
	_, err := Chain{first, second}.Ask(ctx, Request{Command: "true"})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 0, second.calls)
}

func TestChainSkipsMissingTerminal(t *testing.T) {
	t.Parallel()
	next := &fake{ans: Answer{Decision: Deny, By: "hub"}}
	c := Chain{TTY{Path: filepath.Join(t.TempDir(), "no-tty")}, next}
	got, err := c.Ask(t.Context(), Request{Command: "true"})
	require.NoError(t, err)
	assert.Equal(t, Answer{Decision: Deny, By: "hub"}, got)
}
