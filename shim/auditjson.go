package shim

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/execgate/execgate/prompt"
)

// The audit line is written by hand rather than by json.Marshal: on the
// first call, encoding/json walks Event's type by reflection, and the
// shim, a new process for every command, paid that every time (≈ 0.3 M
// instructions, a tenth of its own work on `true`). The output is byte
// for byte what json.Marshal gives (FuzzEventJSON checks it), so readers
// of the log see no change.

// marshalEvent returns ev as json.Marshal would.
func marshalEvent(ev *Event) ([]byte, error) {
	if y := ev.Time.Year(); y < 0 || y > 9999 {
		// json.Marshal refuses such a time; let it say so.
		return json.Marshal(ev)
	}
	b := make([]byte, 0, 256+len(ev.Command)+len(ev.Envelope)+len(ev.OutputTail))
	b = append(b, `{"time":"`...)
	b = ev.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	b = appendField(b, "event", ev.Event, false)
	b = appendField(b, "id", ev.ID, false)
	if ev.Pid != 0 {
		b = append(b, `,"pid":`...)
		b = strconv.AppendInt(b, int64(ev.Pid), 10)
	}
	b = appendField(b, "agent", ev.Agent, false)
	b = appendField(b, "cwd", ev.Cwd, false)
	b = appendField(b, "command", ev.Command, false)
	b = appendField(b, "via", ev.Via, true)
	b = appendField(b, "envelope", ev.Envelope, true)
	b = appendField(b, "source", ev.Source, true)
	b = appendField(b, "risk", ev.Risk, true)
	b = appendList(b, "reasons", ev.Reasons)
	b = appendField(b, "decision", ev.Decision, true)
	b = appendField(b, "decidedBy", ev.DecidedBy, true)
	b = appendField(b, "approvalId", ev.ApprovalID, true)
	b = appendList(b, "allowlisted", ev.Allowlisted)
	if ev.Approver != nil {
		b = appendApprover(append(b, `,"approver":`...), ev.Approver)
	}
	b = appendField(b, "scope", ev.Scope, true)
	b = appendField(b, "message", ev.Message, true)
	if ev.ExitStatus != nil {
		b = strconv.AppendInt(append(b, `,"exitStatus":`...), int64(*ev.ExitStatus), 10)
	}
	b = appendField(b, "signal", ev.Signal, true)
	if ev.DurationMs != nil {
		b = strconv.AppendInt(append(b, `,"durationMs":`...), *ev.DurationMs, 10)
	}
	if ev.OutputSize != 0 {
		b = strconv.AppendInt(append(b, `,"outputBytes":`...), ev.OutputSize, 10)
	}
	if ev.Omitted != 0 {
		b = strconv.AppendInt(append(b, `,"omittedBytes":`...), ev.Omitted, 10)
	}
	b = appendField(b, "spillPath", ev.SpillPath, true)
	b = appendField(b, "outputTail", ev.OutputTail, true)
	if ev.Exec {
		b = append(b, `,"exec":true`...)
	}
	if ev.Direct {
		b = append(b, `,"direct":true`...)
	}
	b = appendField(b, "confined", ev.Confined, true)
	b = appendList(b, "hosts", ev.Hosts)
	b = appendList(b, "hostsRefused", ev.HostsRefused)
	b = appendList(b, "leftRunning", ev.LeftRunning)
	b = appendList(b, "paused", ev.Paused)
	b = appendList(b, "warnings", ev.Warnings)
	if ev.Seq != 0 {
		b = strconv.AppendInt(append(b, `,"seq":`...), ev.Seq, 10)
	}
	b = appendField(b, "prev", ev.Prev, true)
	b = appendField(b, "hash", ev.Hash, true)
	return append(b, '}'), nil
}

// appendApprover appends a as json.Marshal would.
func appendApprover(b []byte, a *prompt.Approver) []byte {
	b = strconv.AppendInt(append(b, `{"uid":`...), int64(a.Uid), 10)
	b = appendField(b, "user", a.User, true)
	b = appendField(b, "kind", a.Kind, true)
	b = appendField(b, "host", a.Host, true)
	b = appendField(b, "name", a.Name, true)
	return append(b, '}')
}

// appendField appends ,"name":"value"; with omitEmpty, nothing for "".
func appendField(b []byte, name, value string, omitEmpty bool) []byte {
	if omitEmpty && value == "" {
		return b
	}
	b = append(append(append(b, `,"`...), name...), `":`...)
	return appendJSONString(b, value)
}

// appendList appends ,"name":[…], or nothing for an empty list.
func appendList(b []byte, name string, list []string) []byte {
	if len(list) == 0 {
		return b
	}
	b = append(append(append(b, `,"`...), name...), `":[`...)
	for i, v := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, v)
	}
	return append(b, ']')
}

// appendJSONString appends s quoted the way encoding/json quotes strings
// by default: HTML characters, U+2028 and U+2029 escaped, invalid UTF-8
// replaced by U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	plain := 0 // s[plain:i] is yet to be copied as it is
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			var esc string
			switch {
			case c == '"':
				esc = `\"`
			case c == '\\':
				esc = `\\`
			case c == '\n':
				esc = `\n`
			case c == '\r':
				esc = `\r`
			case c == '\t':
				esc = `\t`
			case c == '\b':
				esc = `\b`
			case c == '\f':
				esc = `\f`
			case c < 0x20, c == '<', c == '>', c == '&':
				esc = string([]byte{'\\', 'u', '0', '0', hex[c>>4], hex[c&0xf]})
			default:
				i++
				continue
			}
			b = append(append(b, s[plain:i]...), esc...)
			i++
			plain = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[plain:i]...), `\ufffd`...)
		case r == '\u2028', r == '\u2029':
			b = append(append(b, s[plain:i]...), `\u202`...)
			b = append(b, hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		plain = i
	}
	return append(append(b, s[plain:]...), '"')
}
