package gitconfig

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSigns(t *testing.T) {
	signing := &Config{Entries: []Entry{{Name: "commit.gpgsign", Value: "true"}, {Name: "tag.gpgsign", Value: "yes"}}}
	off := &Config{Entries: []Entry{{Name: "commit.gpgsign", Value: "true"}, {Name: "commit.gpgsign", Value: "false"}}}
	plain := &Config{}
	cases := []struct {
		c    *Config
		inv  Invocation
		want bool
	}{
		{signing, Invocation{Sub: "commit", Args: []string{"-m", "x"}}, true},
		{signing, Invocation{Sub: "commit", Args: []string{"--no-gpg-sign", "-m", "x"}}, false},
		{signing, Invocation{Sub: "rebase", Args: []string{"main"}}, true},
		{signing, Invocation{Sub: "merge", Args: []string{"topic"}}, true},
		{signing, Invocation{Sub: "status"}, false},
		{signing, Invocation{Sub: "tag", Args: []string{"v1"}}, true},
		{signing, Invocation{Sub: "tag", Args: []string{"-l"}}, false},
		{signing, Invocation{Sub: "tag", Args: []string{"-d", "v1"}}, false},
		{signing, Invocation{Sub: "tag", Args: []string{"--no-sign", "v1"}}, false},
		{signing, Invocation{Sub: "tag"}, false},
		{signing, Invocation{Sub: "commit", ReadOnly: true}, false},
		{off, Invocation{Sub: "commit", Args: []string{"-m", "x"}}, false}, // last one wins
		{plain, Invocation{Sub: "commit", Args: []string{"-m", "x"}}, false},
		{plain, Invocation{Sub: "commit", Args: []string{"-S", "-m", "x"}}, true},
		{plain, Invocation{Sub: "commit", Args: []string{"-aSkey", "-m", "x"}}, true},
		{plain, Invocation{Sub: "commit", Args: []string{"--gpg-sign=KEY", "-m", "x"}}, true},
		{plain, Invocation{Sub: "commit", Args: []string{"-m", "x", "--", "-S"}}, false},
		{plain, Invocation{Sub: "commit", Args: []string{"-mSubject"}}, false},
		{plain, Invocation{Sub: "commit", Args: []string{"-amSome fix"}}, false},
		{plain, Invocation{Sub: "tag", Args: []string{"-s", "v1", "-m", "x"}}, true},
		{plain, Invocation{Sub: "tag", Args: []string{"-u", "KEY", "v1"}}, true},
		{plain, Invocation{Sub: "tag", Args: []string{"v1"}}, false},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.c.Signs(c.inv), "%+v", c.inv)
	}
}
