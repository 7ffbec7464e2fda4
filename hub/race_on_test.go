//go:build race

package hub

// raceEnabled is set when the race detector is on: a test whose signal is
// a deadline the detector's slowdown alone can miss skips then.
const raceEnabled = true
