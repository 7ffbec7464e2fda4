//go:build !unix

package approve

import (
	"context"
	"errors"
	"os"
)

// Run is only implemented on Unix terminals; elsewhere use execgate
// pending, resolve and watch.
func Run(ctx context.Context, in, out *os.File, o Options) error {
	return errors.New("approve needs a Unix terminal; use execgate pending, resolve and watch")
}
