package policy

import (
	"os"
	"testing"

	throwaway "github.com/execgate/execgate/internal/world"
)

func TestMain(m *testing.M) {
	throwaway.MaybeConfined() // the parser differential's confined bash
	os.Exit(m.Run())
}
