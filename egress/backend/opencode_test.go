package backend

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/egress/openai"
	"github.com/google/go-cmp/cmp"
)

var opencodeCases = []struct {
	name, config, provider string
	want                   opencodeHost
	errHas                 string
}{
	{name: "nothing", config: `{}`, provider: "zai", want: opencodeHost{}},
	{name: "model of another provider", config: `{"model":"anthropic/claude","small_model":"zai/"}`, provider: "zai"},
	{
		name: "catalog provider, model chosen", provider: "zai",
		config: `{"model":"zai/glm-5.3","small_model":"zai/glm-5.3-air","provider":{"zai":{"options":{"baseURL":"https://eu.z.example/v4","apiKey":"sk-in-config"}}}}`,
		want:   opencodeHost{client: openaiOpencode("zai", "glm-5.3", "glm-5.3-air", nil), baseURL: "https://eu.z.example/v4"},
	},
	{
		name: "declared provider loses its secrets and addresses", provider: "mine",
		config: `{"model":"mine/big","provider":{"mine":{"npm":"@ai-sdk/openai-compatible","name":"Mine","api":"https://elsewhere.example",
			"env":["MINE_KEY"],"options":{"baseURL":"https://mine.example/v1","headers":{"X-Secret":"s"}},
			"models":{"big":{"name":"Big","tool_call":true,"headers":{"X-Secret":"s"},"provider":{"api":"https://elsewhere.example"},"options":{"reasoningEffort":"high"}},"odd":"x"}}}}`,
		want: opencodeHost{client: openaiOpencode("mine", "big", "", map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "Mine",
			"models": map[string]any{"big": map[string]any{"name": "Big", "tool_call": true, "options": map[string]any{"reasoningEffort": "high"}}},
		}), baseURL: "https://mine.example/v1"},
	},
	{name: "other SDK", provider: "anth", config: `{"provider":{"anth":{"npm":"@ai-sdk/anthropic"}}}`, errHas: "speaks @ai-sdk/anthropic"},
	{name: "provider not an object", provider: "zai", config: `{"provider":{"zai":"x"},"model":7}`},
}

func TestOpencodeProviderOf(t *testing.T) {
	for _, tc := range opencodeCases {
		t.Run(tc.name, func(t *testing.T) {
			var cfg map[string]any
			if err := json.Unmarshal([]byte(tc.config), &cfg); err != nil {
				t.Fatal(err)
			}
			got, err := opencodeProviderOf(cfg, tc.provider)
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("error %v, want one with %q", err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.want.client.Provider = tc.provider
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(opencodeHost{})); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

// TestOpencodeConfigFiles: the host's files merge in opencode's order
// (JSONC allowed), OPENCODE_CONFIG_CONTENT last; a broken file is named.
func TestOpencodeConfigFiles(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".config", "opencode")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"model":"a/1","provider":{"a":{"name":"A","models":{"1":{}}}}}`), 0o600)
	os.WriteFile(filepath.Join(dir, "opencode.jsonc"), []byte("// mine\n{\"provider\":{\"a\":{\"options\":{\"baseURL\":\"https://a.example\"},},},}"), 0o600)
	extra := filepath.Join(home, "extra.json")
	os.WriteFile(extra, []byte(`{"small_model":"a/2"}`), 0o600)
	vars := map[string]string{"OPENCODE_CONFIG": extra, "OPENCODE_CONFIG_CONTENT": `{"model":"a/3"}`}
	o := Options{Home: home, Getenv: func(k string) string { return vars[k] }}
	cfg, err := opencodeConfig(o)
	if err != nil {
		t.Fatal(err)
	}
	h, err := opencodeProviderOf(cfg, "a")
	if err != nil {
		t.Fatal(err)
	}
	want := opencodeHost{client: openaiOpencode("a", "3", "2", map[string]any{"name": "A", "models": map[string]any{"1": map[string]any{}}}), baseURL: "https://a.example"}
	if d := cmp.Diff(want, h, cmp.AllowUnexported(opencodeHost{})); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}

	os.WriteFile(filepath.Join(dir, "opencode.json"), []byte(`{"model": `), 0o600)
	if _, err := opencodeConfig(o); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "opencode.json")) {
		t.Errorf("a broken config: %v; want an error naming it", err)
	}
	os.Remove(filepath.Join(dir, "opencode.json"))
	os.Symlink(extra, filepath.Join(dir, "opencode.json"))
	if _, err := opencodeConfig(o); err == nil {
		t.Errorf("a symlinked config was followed")
	}
}

func TestOpencodeDefaultProvider(t *testing.T) {
	for _, tc := range []struct {
		model string
		ids   []string
		want  string
	}{
		{"", nil, ""},
		{"", []string{"a"}, "a"},
		{"", []string{"a", "b"}, ""},
		{"b/m", []string{"a", "b"}, "b"},
		{"c/m", []string{"a", "b"}, ""},
		{"c/m", []string{"a"}, "a"},
	} {
		cfg := map[string]any{"model": tc.model}
		if got := opencodeDefaultProvider(cfg, tc.ids); got != tc.want {
			t.Errorf("model %q, keys %v: %q, want %q", tc.model, tc.ids, got, tc.want)
		}
	}
}

// FuzzOpencodeProviderOf: any config gives a declaration without options
// or headers, and never a panic.
func FuzzOpencodeProviderOf(f *testing.F) {
	for _, tc := range opencodeCases {
		f.Add([]byte(tc.config), tc.provider)
	}
	f.Fuzz(func(t *testing.T, data []byte, p string) {
		var cfg map[string]any
		if json.Unmarshal(data, &cfg) != nil {
			return
		}
		h, err := opencodeProviderOf(cfg, p)
		if err != nil {
			return
		}
		b, _ := json.Marshal(h.client.Definition)
		var back map[string]any
		json.Unmarshal(b, &back)
		if _, ok := back["options"]; ok {
			t.Fatalf("options kept: %s", b)
		}
		models, _ := back["models"].(map[string]any)
		for id, m := range models {
			mm, _ := m.(map[string]any)
			if _, ok := mm["headers"]; ok {
				t.Fatalf("model %s kept its headers: %s", id, b)
			}
			if _, ok := mm["provider"]; ok {
				t.Fatalf("model %s kept its provider: %s", id, b)
			}
		}
		c := h.client.Config("http://127.0.0.1:1")
		var out map[string]any
		if err := json.Unmarshal([]byte(c), &out); err != nil {
			t.Fatalf("config %q: %v", c, err)
		}
	})
}

func openaiOpencode(p, model, small string, def map[string]any) openai.Opencode {
	return openai.Opencode{Provider: p, Model: model, SmallModel: small, Definition: def}
}

// TestNewCompatibleFromConfig: an opencode provider declared in the host's
// config is served at its baseURL (the override wins), and the box's
// config names the host's model and the provider without its options.
func TestNewCompatibleFromConfig(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".config/opencode"), 0o700)
	os.MkdirAll(filepath.Join(home, ".local/share/opencode"), 0o700)
	os.WriteFile(filepath.Join(home, ".local/share/opencode/auth.json"), []byte(`{"mine":{"type":"api","key":"sk-mine"}}`), 0o600)
	write := func(baseURL string) {
		os.WriteFile(filepath.Join(home, ".config/opencode/opencode.json"), []byte(`{"model":"mine/big","provider":{"mine":{"npm":"@ai-sdk/openai-compatible",
			"options":{"baseURL":"`+baseURL+`","apiKey":"sk-in-config"},"models":{"big":{"name":"Big"}}}}}`), 0o600)
	}
	for _, tc := range []struct {
		baseURL, override, want, errHas string
	}{
		{baseURL: "https://mine.example/v1", want: "https://mine.example/v1"},
		{baseURL: "https://mine.example/v1", override: "https://other.example", want: "https://other.example"},
		{baseURL: "http://localhost:11434/v1", errHas: `the baseURL of provider "mine" in opencode's config (AISAN_OPENCODE_UPSTREAM_MINE overrides it): upstream http://localhost:11434/v1 is not https`},
	} {
		write(tc.baseURL)
		vars := map[string]string{"AISAN_OPENCODE_UPSTREAM_MINE": tc.override}
		s, err := New("openai-compatible:mine", Options{Home: home, Getenv: func(k string) string { return vars[k] }})
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("%s: error %v, want %q", tc.baseURL, err, tc.errHas)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Backend.Upstream.String(); got != tc.want {
			t.Errorf("upstream %s, want %s", got, tc.want)
		}
		cfg := s.Config("http://127.0.0.1:8715")
		for _, bad := range []string{"sk-in-config", "mine.example", "other.example"} {
			if strings.Contains(cfg, bad) {
				t.Errorf("the box's config holds %q: %s", bad, cfg)
			}
		}
		if !strings.Contains(cfg, `"model":"mine/big"`) || !strings.Contains(cfg, `"baseURL":"http://127.0.0.1:8715"`) || !strings.Contains(cfg, `"npm":"@ai-sdk/openai-compatible"`) {
			t.Errorf("the box's config: %s", cfg)
		}
	}
}
