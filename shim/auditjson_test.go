package shim

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/execgate/execgate/prompt"
)

// fillEvent sets every field of an Event from the fuzzer's values, by
// reflection, so that a field added to Event later is covered without
// editing this test (and an unknown kind of field fails it).
func fillEvent(t *testing.T, a, b string, n int64, bits uint32) Event {
	var ev Event
	v := reflect.ValueOf(&ev).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		on := bits&(1<<(i%32)) != 0
		s := a
		if i%2 == 1 {
			s = b
		}
		switch f.Interface().(type) {
		case string:
			if on {
				f.SetString(s)
			}
		case int, int64:
			if on {
				f.SetInt(n)
			}
		case bool:
			f.SetBool(on)
		case []string:
			if on {
				f.Set(reflect.ValueOf([]string{a, b}))
			} else if n%2 == 0 {
				f.Set(reflect.ValueOf([]string{}))
			}
		case *int:
			if on {
				x := int(n)
				f.Set(reflect.ValueOf(&x))
			}
		case *int64:
			if on {
				f.Set(reflect.ValueOf(&n))
			}
		case time.Time:
			f.Set(reflect.ValueOf(time.Unix(n%(1<<40), n%1e9).UTC()))
		case *prompt.Approver:
			if on {
				f.Set(reflect.ValueOf(&prompt.Approver{Uid: int(n), User: a, Kind: b, Host: a, Name: b}))
			}
		default:
			t.Fatalf("Event.%s has a type marshalEvent does not know: teach it, then this test", v.Type().Field(i).Name)
		}
	}
	return ev
}

// FuzzEventJSON: the hand-written audit line is byte for byte what
// json.Marshal makes of the same event.
func FuzzEventJSON(f *testing.F) {
	f.Add("git status", "/home/ada/src", int64(42), uint32(0xffffffff))
	f.Add("echo \"<a&b>\"\n\t\\ \x00\x1f\x7f", "\u2028\u2029 é \xff\xfe", int64(-1), uint32(0x5555))
	f.Add("", "", int64(0), uint32(0))
	f.Add("\b\f\r", "日本語 \U0001F600", int64(1)<<40, uint32(0xaaaa))
	f.Fuzz(func(t *testing.T, a, b string, n int64, bits uint32) {
		ev := fillEvent(t, a, b, n, bits)
		want, werr := json.Marshal(&ev)
		got, gerr := marshalEvent(&ev)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("json.Marshal error %v, marshalEvent error %v", werr, gerr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("marshalEvent differs from json.Marshal:\n got %s\nwant %s", got, want)
		}
	})
}

// TestEventJSONYears: a time json.Marshal refuses is refused the same.
func TestEventJSONYears(t *testing.T) {
	for _, y := range []int{-1, 0, 9999, 10000} {
		ev := Event{Time: time.Date(y, 1, 2, 3, 4, 5, 6, time.UTC), Event: "x"}
		want, werr := json.Marshal(&ev)
		got, gerr := marshalEvent(&ev)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Errorf("year %d: got %s %v, want %s %v", y, got, gerr, want, werr)
		}
	}
}
