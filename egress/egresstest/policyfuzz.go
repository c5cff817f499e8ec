package egresstest

import (
	"encoding/json"
	"testing"

	"github.com/aisan-dev/aisan/egress"
)

// TrimmedBody is body b with every list cut to its first two elements
// and every string to 64 bytes: a captured body is 50 KB, which slows a
// fuzzer's mutation to a crawl, and what the policy looks at survives.
func TrimmedBody(t testing.TB, b []byte) []byte {
	obj, err := egress.ParseObject(b)
	if err != nil {
		t.Fatal(err)
	}
	var cut func(any) any
	cut = func(v any) any {
		switch x := v.(type) {
		case []any:
			if len(x) > 2 {
				x = x[:2]
			}
			for i := range x {
				x[i] = cut(x[i])
			}
			return x
		case map[string]any:
			for k := range x {
				x[k] = cut(x[k])
			}
		case string:
			if len(x) > 64 {
				return x[:64]
			}
		}
		return v
	}
	out, _ := json.Marshal(cut(obj))
	return out
}

// PolicyFuzz is a fuzz body for a request policy: whatever check passes
// holds nothing that danger (an independent walk, sharing nothing with
// the policy's tables) finds, and check answers the same every time.
func PolicyFuzz(check func(map[string]any) error, danger func(v any, key string) string) func(*testing.T, []byte) {
	return func(t *testing.T, b []byte) {
		obj, err := egress.ParseObject(b)
		if err != nil {
			return
		}
		err1 := check(obj)
		if err2 := check(obj); (err1 == nil) != (err2 == nil) || err1 != nil && err1.Error() != err2.Error() {
			t.Fatalf("two answers: %v, %v", err1, err2)
		}
		if err1 != nil {
			return
		}
		if why := danger(obj, ""); why != "" {
			t.Fatalf("passed: %s", why)
		}
	}
}
