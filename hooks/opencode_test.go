package hooks

import (
	"errors"
	"fmt"
	"testing"
)

func TestOpencodePermission(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, `{"bash":{"pkill *":"deny","killall *":"deny"}}`},
		{`  `, `{"bash":{"pkill *":"deny","killall *":"deny"}}`},
		{`{}`, `{"bash":{"pkill *":"deny","killall *":"deny"}}`},
		// One action for everything: kept for every tool, bash included.
		{`"allow"`, `{"*":"allow","bash":{"*":"allow","pkill *":"deny","killall *":"deny"}}`},
		// A bash action becomes the catch-all before the denies.
		{`{"edit":"ask","bash":"allow","webfetch":"deny"}`,
			`{"edit":"ask","bash":{"*":"allow","pkill *":"deny","killall *":"deny"},"webfetch":"deny"}`},
		// Bash patterns keep their order; ours go last, where they win.
		{`{"bash":{"*":"ask","git *":"allow","pkill *":"allow"}}`,
			`{"bash":{"*":"ask","git *":"allow","pkill *":"deny","killall *":"deny"}}`},
		{`{ "bash" : { "*" : "allow" } , "read" : { "*.env" : "ask" } }`,
			`{"bash":{"*":"allow","pkill *":"deny","killall *":"deny"},"read":{"*.env":"ask"}}`},
		{`{"external_directory":"allow"}`,
			`{"external_directory":"allow","bash":{"pkill *":"deny","killall *":"deny"}}`},
	} {
		got, err := OpencodePermission(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("OpencodePermission(%q) =\n %s, %v\nwant\n %s", tc.in, got, err, tc.want)
		}
		again, err := OpencodePermission(got)
		if err != nil || again != got {
			t.Errorf("OpencodePermission is not idempotent on %s: %s, %v", got, again, err)
		}
	}
}

func TestOpencodePermissionRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"bash":`, "parsing OPENCODE_PERMISSION: line 1, column 8: unexpected end of JSON input"},
		{`allow`, "parsing OPENCODE_PERMISSION: line 1, column 1: invalid character 'a' looking for beginning of value"},
		{`["allow"]`, "OPENCODE_PERMISSION is an array, want an object or a string"},
		{`{"bash":["pkill"]}`, `OPENCODE_PERMISSION "bash" is an array, want an object or a string`},
		{`{"bash":{},"bash":{}}`, `in OPENCODE_PERMISSION: key "bash" appears more than once`},
	} {
		_, err := OpencodePermission(tc.in)
		if err == nil || err.Error() != tc.want {
			t.Errorf("OpencodePermission(%q) error = %v, want %s", tc.in, err, tc.want)
		}
	}
	_, err := OpencodePermission(`{"a":1,}`)
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Errorf("error %v is not a ParseError", err)
	}
}

func ExampleOpencodePermission() {
	v, err := OpencodePermission(`{"bash":{"*":"ask","go test *":"allow"}}`)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(v)
	// Output: {"bash":{"*":"ask","go test *":"allow","pkill *":"deny","killall *":"deny"}}
}
