// Package pattern compiles and matches execgate's allowlist and denylist
// patterns: ValidatePattern checks one, a Matcher finds the first Entry
// matching a command's argv, and Literal and Prefix write the patterns that
// match an argv exactly or by its leading words.
//
// Patterns are globs over a command's words. `*` matches within one word,
// `**` (as a whole word) any run of words including none, and a pattern
// without wildcards matches as a word prefix: "npm run test" matches
// "npm run test -- -u" but not "npm run tests". A last word `$` anchors
// the pattern: "npm run test $" matches "npm run test" only. A bare program
// name means the program found on PATH; a program written with a slash matches the
// resolved absolute path. Matching is case-sensitive.
package pattern
