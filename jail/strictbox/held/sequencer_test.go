package held

import (
	"strings"
	"testing"
)

func FuzzExecLines(f *testing.F) {
	f.Add("pick abc one\nexec make test\nx   ./run.sh  \nbreak\n")
	f.Add("exec\nx\nexecute this\n# exec commented\n")
	f.Fuzz(func(t *testing.T, todo string) {
		for _, l := range execLines([]byte(todo)) {
			word, rest, _ := strings.Cut(l, " ")
			if word != "exec" && word != "x" || strings.TrimSpace(rest) == "" || l != strings.TrimSpace(l) {
				t.Fatalf("execLines: %q is not an exec line", l)
			}
		}
	})
}
