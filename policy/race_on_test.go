//go:build race

package policy

// raceSlowdown scales the time and memory budgets of the adversarial inputs:
// the race detector makes everything several times slower and larger.
const raceSlowdown = 10

// raceEnabled is set when the race detector is on: the heaviest property
// tests, which find no race the rest of the package does not, skip then.
const raceEnabled = true
