package policy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// The seeds under testdata/<api>/ are the request bodies the real clients
// sent the stand-ins of the strict end-to-end tests (tests/, run with
// -aisan.capture DIR), each string cut short, so the corpus keeps their
// shapes without their prompts. The backends' tests check that every seed
// passes their table and fuzz from them. To refresh the seeds:
//
//	bash tests/env/it.sh 'TestStrict' -aisan.capture /tmp/capture
//	go test ./egress/policy -run TestImportCaptured -import /tmp/capture
var importDir = flag.String("import", "", "abbreviate the captured bodies under this directory into testdata")

// seedAPIs are the capture's subdirectories.
var seedAPIs = []string{"messages", "count_tokens", "vertex", "responses", "chat"}

func TestImportCaptured(t *testing.T) {
	if *importDir == "" {
		t.Skip("no -import directory")
	}
	for _, api := range seedAPIs {
		files, _ := filepath.Glob(filepath.Join(*importDir, api, "*.json"))
		out := filepath.Join("testdata", api)
		if err := os.MkdirAll(out, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			short, err := abbreviate(b)
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			sum := sha256.Sum256(short)
			if err := os.WriteFile(filepath.Join(out, hex.EncodeToString(sum[:6])+".json"), short, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%s: %d bodies", api, len(files))
	}
}

// keep is how much of a string a seed keeps: enough for every tag, enum
// and data: prefix the tables look at.
const keep = 40

// abbreviate cuts every string of a JSON body to keep bytes (at a rune
// boundary) and indents it; keys, numbers and structure stay.
func abbreviate(b []byte) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	var cut func(any) any
	cut = func(v any) any {
		switch x := v.(type) {
		case string:
			if len(x) <= keep {
				return x
			}
			n := keep
			for n > 0 && !utf8.RuneStart(x[n]) {
				n--
			}
			return x[:n] + "…"
		case []any:
			for i := range x {
				x[i] = cut(x[i])
			}
		case map[string]any:
			for k := range x {
				x[k] = cut(x[k])
			}
		}
		return v
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(cut(v)); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func TestAbbreviate(t *testing.T) {
	got, err := abbreviate([]byte(`{"type":"text","text":"` + string(bytes.Repeat([]byte("é"), 30)) + `","n":1.50,"l":[{"k":"data:image/png;base64,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Text string
		N    json.Number
		L    []map[string]string
	}
	json.Unmarshal(got, &v)
	if !utf8.ValidString(v.Text) || len(v.Text) > keep+3 || v.N != "1.50" || v.L[0]["k"][:22] != "data:image/png;base64," {
		t.Errorf("%s", got)
	}
}
