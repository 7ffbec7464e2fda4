package hub

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
)

// The hub proves itself to its clients as they prove themselves to it:
// with the token. A client's hello carries a fresh nonce (its challenge);
// the hub answers with a nonce of its own, and both derive the
// connection's key from the token and the two nonces (connKey). From the
// hello's answer on, every frame the hub sends, and every frame a client
// that checked the hub sends, ends in a sequence number and a MAC under
// that key:
//
//	{"id":"1","ok":true,"result":{…},"seq":1,"mac":"<64 hex>"}
//
// So a process that listens on the hub's socket without knowing the token
// (an agent that bound it while no hub ran, a relay in front of the real
// hub) can neither answer a hello nor change, insert, reorder or replay a
// single frame in either direction: the client refuses it and fails
// closed. See docs/protocol.md, "The hub proves itself".

// Directions, part of what each frame's MAC covers, so that a frame cannot
// be reflected back to its sender.
const (
	dirHub    = "hub"
	dirClient = "client"
)

// sealSuffixMax is the most a seal adds to a frame: `,"seq":` with up to
// 20 digits, `,"mac":"`, 64 hex digits, `"}` and the newline.
const sealSuffixMax = len(`,"seq":`) + 20 + len(`,"mac":""}`) + 64 + 1

// macSuffixLen is the length of the fixed end of a sealed frame:
// `,"mac":"` + 64 hex + `"}`.
const macSuffixLen = len(`,"mac":""}`) + 64

// ErrNotAuthentic reports that the process on the hub's socket did not
// prove it knows the token, or that a frame on the connection failed its
// check: whoever listens is not the hub, or something sits between. The
// client refuses it; a shim then refuses the command.
var ErrNotAuthentic = errors.New("the process listening there did not prove it is the hub")

// connKey derives a connection's key: HMAC-SHA256 keyed with the token
// over the protocol, the role and both nonces.
func connKey(token string, role Role, clientNonce, hubNonce string) []byte {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("execgate-hub/" + strconv.Itoa(ProtocolVersion) + " connection " + string(role) + " " + clientNonce + " " + hubNonce))
	return m.Sum(nil)
}

// frameMAC is the MAC of one frame: HMAC-SHA256 under the connection's
// key over the direction, the sequence number and the SHA-256 of the
// frame as it would be without its seal. Hashing the frame first lets the
// hub seal an event once for all its subscribers but the last step.
func frameMAC(key []byte, dir string, seq uint64, digest *[sha256.Size]byte) []byte {
	var buf [2 * sha256.Size]byte
	hex.Encode(buf[:], digest[:])
	m := hmac.New(sha256.New, key)
	m.Write([]byte(dir + " " + strconv.FormatUint(seq, 10) + " "))
	m.Write(buf[:])
	return m.Sum(nil)
}

// sealSuffix returns what replaces the closing brace of a frame (a JSON
// object) to seal it as number seq: `,"seq":N,"mac":"…"}` and the newline.
func sealSuffix(key []byte, dir string, seq uint64, digest *[sha256.Size]byte) []byte {
	mac := frameMAC(key, dir, seq, digest)
	b := make([]byte, 0, sealSuffixMax)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, `,"mac":"`...)
	b = hex.AppendEncode(b, mac)
	return append(b, "\"}\n"...)
}

// seal returns body (one JSON object, no newline) sealed as frame seq,
// newline included.
func seal(key []byte, dir string, seq uint64, body []byte) []byte {
	d := sha256.Sum256(body)
	out := make([]byte, 0, len(body)+sealSuffixMax)
	out = append(out, body[:len(body)-1]...)
	return append(out, sealSuffix(key, dir, seq, &d)...)
}

// unsealed is a sealed frame taken apart.
type unsealed struct {
	body []byte // the frame without its seal
	seq  uint64
	mac  []byte
}

// splitSeal takes the seal off a frame line (trailing white space
// allowed) without checking it; ok is false when the line is not sealed.
func splitSeal(line []byte) (u unsealed, ok bool) {
	l := bytes.TrimRight(line, " \t\r\n")
	if len(l) < macSuffixLen+len(`{,"seq":0`) || !bytes.HasSuffix(l, []byte(`"}`)) {
		return u, false
	}
	tail := l[len(l)-macSuffixLen:]
	if !bytes.HasPrefix(tail, []byte(`,"mac":"`)) {
		return u, false
	}
	mac, err := hex.DecodeString(string(tail[len(`,"mac":"`) : len(tail)-2]))
	if err != nil || len(mac) != sha256.Size {
		return u, false
	}
	rest := l[:len(l)-macSuffixLen]
	i := bytes.LastIndex(rest, []byte(`,"seq":`))
	if i < 1 {
		return u, false
	}
	digits := rest[i+len(`,"seq":`):]
	if len(digits) == 0 || len(digits) > 20 || digits[0] == '0' {
		return u, false
	}
	seq, err := strconv.ParseUint(string(digits), 10, 64)
	if err != nil {
		return u, false
	}
	body := make([]byte, 0, i+1)
	body = append(append(body, rest[:i]...), '}')
	return unsealed{body: body, seq: seq, mac: mac}, true
}

// check verifies u as frame number want in direction dir.
func (u unsealed) check(key []byte, dir string, want uint64) error {
	d := sha256.Sum256(u.body)
	if !hmac.Equal(frameMAC(key, dir, u.seq, &d), u.mac) {
		return errors.New("bad MAC")
	}
	if u.seq != want {
		return fmt.Errorf("frame %d where %d was due (dropped, replayed or reordered)", u.seq, want)
	}
	return nil
}

// openSealed checks a sealed frame line as number want and returns the
// frame without its seal.
func openSealed(line []byte, key []byte, dir string, want uint64) ([]byte, error) {
	u, ok := splitSeal(line)
	if !ok {
		return nil, errors.New("frame not sealed")
	}
	if err := u.check(key, dir, want); err != nil {
		return nil, err
	}
	return u.body, nil
}
