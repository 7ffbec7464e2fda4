// Package display makes text that execgate did not write safe to show:
// commands, reasons that quote them, names a peer sent. Escape shows every
// character a terminal would not display as itself as a visible escape,
// Line puts text on one bounded line for messages, and Cut and Shorten
// bound text without splitting a character.
//
// It is the one place these rules live, so that a refusal, an audit line, a
// hub label and an approval prompt cannot disagree about what a command
// looks like.
package display
