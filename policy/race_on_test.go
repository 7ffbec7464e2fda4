//go:build race

package policy

// raceSlowdown scales the time and memory budgets of the adversarial inputs:
// the race detector makes everything several times slower and larger.
const raceSlowdown = 10

// raceEnabled is set when the tests run under the race detector.
const raceEnabled = true
