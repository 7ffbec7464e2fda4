package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
)

// runLogExport is `execgate log --export [--follow]`: it runs
// execgate-export, installed beside execgate, which sends the audit log's
// new events to the collectors audit.export names. The export is a binary
// apart so that execgate, which every hook call starts, does not link the
// OpenTelemetry SDK (docs/BENCHMARKS.md).
func runLogExport(ctx context.Context, g *globals, follow bool) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("log --export: %w", err)
	}
	bin := filepath.Join(filepath.Dir(self), "execgate-export")
	if _, err := os.Stat(bin); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("log --export: %s is not installed (install.sh builds it, or go build ./cmd/execgate-export)", bin)
	}
	args := []string{"--config", configPath(g)}
	if follow {
		args = append(args, "--follow")
	}
	if ctx == nil {
		ctx = context.Background()
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = g.stdout, g.stderr
	cmd.Env = os.Environ()
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exitCodeError{exit.ExitCode()}
		}
		return fmt.Errorf("log --export: %w", err)
	}
	return nil
}
