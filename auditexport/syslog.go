package auditexport

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/shim"
)

// Syslog messages are RFC 5424 (the local socket's in its own form, see
// appendMessage): facility authpriv, which a Debian rsyslog
// files in /var/log/auth.log, readable by administrators only (an event
// holds the command text); severity notice for a refusal, info otherwise.
// The message is the log line itself, JSON, as the local log holds it.
const (
	facilityAuthpriv = 10
	severityNotice   = 5
	severityInfo     = 6
	// maxDatagram bounds a message sent as one UDP datagram; a longer line
	// (a long command, an output tail) is cut, and says so.
	maxDatagram = 60000
)

// SyslogSender sends to a syslog daemon over a unix datagram socket
// (/dev/log), UDP, or TCP with octet-counted frames (RFC 6587).
type SyslogSender struct {
	network, address string
	tag, host        string
	conn             net.Conn
}

// NewSyslogSender prepares a sender for s; it connects on first use.
func NewSyslogSender(s *config.SyslogExport) (*SyslogSender, error) {
	network, address, err := config.SyslogNetwork(s.Address)
	if err != nil {
		return nil, err
	}
	tag := s.Tag
	if tag == "" {
		tag = "execgate"
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "-"
	}
	return &SyslogSender{network: network, address: address, tag: tag, host: host}, nil
}

// Send writes each record as one message. On an error the connection is
// dropped, to be made again by the next Send.
func (s *SyslogSender) Send(ctx context.Context, recs []Record) error {
	if s.conn == nil {
		d := net.Dialer{Timeout: timeout}
		c, err := d.DialContext(ctx, s.network, s.address)
		if err != nil {
			return err
		}
		s.conn = c
	}
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	s.conn.SetWriteDeadline(deadline)
	var buf []byte
	for _, r := range recs {
		buf = s.appendMessage(buf[:0], r)
		if _, err := s.conn.Write(buf); err != nil {
			s.conn.Close()
			s.conn = nil
			return err
		}
	}
	return nil
}

// Close closes the connection.
func (s *SyslogSender) Close() error {
	if s.conn == nil {
		return nil
	}
	err := s.conn.Close()
	s.conn = nil
	return err
}

// appendMessage appends r as an RFC 5424 message, framed for TCP:
//
//	<85>1 2026-11-29T09:00:00.123456Z host execgate 4242 exec.denied - {"time":…}
//
// or, to the local socket, in its local form:
//
//	<85>Nov 29 09:00:00 execgate[4242]: {"time":…}
func (s *SyslogSender) appendMessage(b []byte, r Record) []byte {
	sev := severityInfo
	if r.Event.Event == shim.EventDenied {
		sev = severityNotice
	}
	procid := "-"
	if r.Event.Pid > 0 {
		procid = strconv.Itoa(r.Event.Pid)
	}
	msgid := printable(r.Event.Event, 32)
	t := r.Event.Time
	if t.IsZero() {
		t = time.Now()
	}
	var head string
	if s.network == "unixgram" {
		// The local daemon's socket takes the local form, which glibc's
		// syslog(3) sends: rsyslog's imuxsock and journald read it, and a
		// stock rsyslog misreads RFC 5424 there. The event's name and
		// exact time are in the line itself.
		head = fmt.Sprintf("<%d>%s %s[%s]: ", facilityAuthpriv*8+sev, t.Local().Format(time.Stamp), s.tag, procid)
	} else {
		head = fmt.Sprintf("<%d>1 %s %s %s %s %s - ", facilityAuthpriv*8+sev,
			t.UTC().Format("2006-01-02T15:04:05.000000Z"), printable(s.host, 255), s.tag, procid, msgid)
	}
	line := r.Line
	if s.network == "udp" && len(head)+len(line) > maxDatagram {
		line = append(line[:maxDatagram-len(head)-len(" …(cut)"):maxDatagram-len(head)-len(" …(cut)")], " …(cut)"...)
	}
	if s.network == "tcp" {
		b = strconv.AppendInt(b, int64(len(head)+len(line)), 10)
		b = append(b, ' ')
	}
	return append(append(b, head...), line...)
}

// printable is s as a syslog header field: printable ASCII without
// spaces, at most n bytes, "-" when empty.
func printable(s string, n int) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s) && len(b) < n; i++ {
		if c := s[i]; c > ' ' && c <= '~' {
			b = append(b, c)
		}
	}
	if len(b) == 0 {
		return "-"
	}
	return string(b)
}
