package guard

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseOpts(t *testing.T) {
	long := []string{"user", "signal=", "system", "now", "null"}
	tests := []struct {
		spec optSpec
		in   string
		opts string // name=value, space-separated; name alone for no value
		ops  string
	}{
		{optSpec{vals: "s"}, "-s KILL x y", "s=KILL", "x y"},
		{optSpec{vals: "s"}, "-sKILL x", "s=KILL", "x"},
		{optSpec{vals: "s"}, "-abs KILL x", "a b s=KILL", "x"},
		{optSpec{vals: "s"}, "-- -s x", "", "-s x"},
		{optSpec{vals: "s"}, "x -s y", "", "x -s y"},
		{optSpec{vals: "s", permute: true}, "x -s y z", "s=y", "x z"},
		{optSpec{long: long}, "--signal KILL --us x", "signal=KILL user", "x"},
		{optSpec{long: long}, "--signal=KILL x", "signal=KILL", "x"},
		{optSpec{long: long}, "--n x", "now null", "x"},
		{optSpec{long: long}, "--weird x", "weird", "x"},
		{optSpec{opt: "i"}, "-i{} echo", "i={}", "echo"},
		{optSpec{opt: "i"}, "-i echo", "i", "echo"},
		{optSpec{vals: "o", plus: true, dashOp: true}, "+e -o pipefail - a", "e o=pipefail", "a"},
		{optSpec{vals: "cm", stop: "m"}, "-m pytest -k x", "m=pytest", "-k x"},
		{optSpec{vals: "s"}, "-s", "s", ""},
		{optSpec{}, "- x", "", "- x"},
	}
	for _, tt := range tests {
		opts, ops := parseOpts(splitArgs(tt.in), tt.spec)
		var got []string
		for _, o := range opts {
			if o.hasVal {
				got = append(got, o.name+"="+o.val.text)
			} else {
				got = append(got, o.name)
			}
		}
		if g := strings.Join(got, " "); g != tt.opts {
			t.Errorf("parseOpts(%q) options = %q, want %q", tt.in, g, tt.opts)
		}
		if g := joinTexts(ops); g != tt.ops {
			t.Errorf("parseOpts(%q) operands = %q, want %q", tt.in, g, tt.ops)
		}
	}
}

func TestParseOptsDynamicWordIsAnOperand(t *testing.T) {
	args := []arg{knownArg("-a"), {text: "$x", src: "$x"}, knownArg("-b")}
	opts, ops := parseOpts(args, optSpec{})
	if len(opts) != 1 || len(ops) != 2 || ops[0].text != "$x" {
		t.Errorf("parseOpts = %v, %v; want -a, then $x -b as operands", opts, ops)
	}
}

func TestCronCommand(t *testing.T) {
	tests := []struct {
		line, cmd string
		ok        bool
	}{
		{"* * * * * pkill node", " pkill node", true},
		{"*/5 1-3 * * mon  kill 1 % input", "  kill 1 ", true},
		{`0 0 * * * date +\%F`, " date +%F", true},
		{"@reboot kill -9 4242", " kill -9 4242", true},
		{"# * * * * * pkill x", "", false},
		{"MAILTO=me", "", false},
		{"", "", false},
		{"* * *", "", false},
	}
	for _, tt := range tests {
		cmd, ok := cronCommand(tt.line)
		if cmd != tt.cmd || ok != tt.ok {
			t.Errorf("cronCommand(%q) = %q, %v; want %q, %v", tt.line, cmd, ok, tt.cmd, tt.ok)
		}
	}
}

func TestMakeRefs(t *testing.T) {
	tests := map[string]string{
		"kill $$(cat pid)":   "kill $(cat pid)",
		"$(CC) -o $@ $<":     codeVar + " -o " + codeVar + " " + codeVar,
		"echo ${X} $(a (b))": "echo " + codeVar + " " + codeVar,
		"pkill node":         "pkill node",
	}
	for in, want := range tests {
		if got := makeRefs(in); got != want {
			t.Errorf("makeRefs(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLexCode checks that comments go and strings keep their value.
func TestLexCode(t *testing.T) {
	tests := []struct {
		l    lang
		code string
		want string
	}{
		{langJS, "execSync('npm test') // was: pkill -f jest", "name:execSync punct:( string:npm test punct:)"},
		{langJS, "/* pkill */ x(`a ${b} c`)", "name:x punct:( template:a " + codeVar + " c punct:)"},
		{langPython, "os.system(f\"kill {pid}\")  # pkill", "name:os.system punct:( string:kill " + codeVar + " punct:)"},
		{langPython, "r'''a\\nb'''", `string:a\nb`},
		{langPerl, "print `ls`; qx(pkill x)", "name:print shell:ls punct:; shell:pkill x"},
		{langRuby, "%x(pkill x) # kill", "shell:pkill x"},
		{langRuby, `system("kill #{pid}")`, "name:system punct:( string:kill " + codeVar + " punct:)"},
		{langAwk, `{ system("kill " $2) }`, "punct:{ name:system punct:( string:kill  name:$2 punct:) punct:}"},
	}
	for _, tt := range tests {
		var got []string
		for _, tok := range lexCode(tt.l, tt.code) {
			got = append(got, fmt.Sprintf("%s:%s", tok.kind, tok.text))
		}
		if g := strings.Join(got, " "); g != tt.want {
			t.Errorf("lexCode(%q) = %q, want %q", tt.code, g, tt.want)
		}
	}
}

func TestTclCommands(t *testing.T) {
	var got []string
	for _, cmd := range tclCommands("spawn ssh host\nexpect {\n  \"$ \" { send \"pkill x\\r\" }\n}; exec kill [pid]") {
		var words []string
		for _, w := range cmd {
			words = append(words, w.a.text)
		}
		got = append(got, strings.Join(words, "|"))
	}
	want := "spawn|ssh|host ; expect|\n  \"$ \" { send \"pkill x\\r\" }\n ; exec|kill|[pid]"
	if g := strings.Join(got, " ; "); g != want {
		t.Errorf("tclCommands = %q, want %q", g, want)
	}
}
