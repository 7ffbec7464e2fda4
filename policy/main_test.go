package policy

import (
	"os"
	"testing"

	"github.com/execgate/execgate/internal/world"
)

func TestMain(m *testing.M) {
	world.MaybeConfined() // the parser differential's confined bash
	os.Exit(m.Run())
}
