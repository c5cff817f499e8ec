package backend

// What a strict box's opencode takes from the host's opencode setup.
//
// Rules:
//   - The box never sees the host's opencode config files: they may hold
//     keys (options.apiKey), headers, and providers the box must not use.
//     Only what names a model passes: the user's model choice within the
//     served provider, and that provider's declaration (npm package,
//     display name, models) when the host config declares one.
//   - From a declaration, the provider's options (keys, headers, its
//     address) are dropped and the endpoint set as the only one; a
//     model's headers and its own provider override go too, so nothing
//     routes a call past the endpoint. A model's options stay: they are
//     request body fields, which the proxy's policy checks.
//   - The host's baseURL for the provider is the upstream (after the
//     AISAN_OPENCODE_UPSTREAM_<P> override, before the catalog cache).

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/aisan-dev/aisan/egress/cred"
	"github.com/aisan-dev/aisan/egress/openai"
	"github.com/aisan-dev/aisan/jail/agent"
	"github.com/aisan-dev/aisan/jail/shared/regfile"
	"github.com/tailscale/hujson"
)

// maxOpencodeConfig caps what is read of one opencode config file.
const maxOpencodeConfig = 4 << 20

// opencodeHost is what the host's opencode configuration says about one
// provider.
type opencodeHost struct {
	client openai.Opencode
	// baseURL is the host's options.baseURL for the provider, "" if none.
	baseURL string
}

// opencodeConfigFiles are the host's global opencode config files in the
// order opencode merges them (later over earlier); project files are not
// read here, as the box sees the project's own.
func opencodeConfigFiles(o Options) []string {
	dir := filepath.Join(o.dir("XDG_CONFIG_HOME", ".config"), "opencode")
	files := []string{filepath.Join(dir, "config.json"), filepath.Join(dir, "opencode.json"), filepath.Join(dir, "opencode.jsonc")}
	if v := o.Getenv("OPENCODE_CONFIG"); filepath.IsAbs(v) {
		files = append(files, v)
	}
	return files
}

// opencodeConfig merges the host's opencode configuration: the files, then
// OPENCODE_CONFIG_CONTENT, as opencode does (objects key by key, anything
// else replaced). A missing file is skipped; one that does not parse is an
// error naming it, as opencode itself would not start with it.
func opencodeConfig(o Options) (map[string]any, error) {
	merged := map[string]any{}
	add := func(name string, data []byte) error {
		std, err := hujson.Standardize(data)
		if err != nil {
			return fmt.Errorf("opencode's config %s does not parse: %w", name, err)
		}
		if len(strings.TrimSpace(string(std))) == 0 {
			return nil
		}
		var m map[string]any
		if err := json.Unmarshal(std, &m); err != nil {
			return fmt.Errorf("opencode's config %s is not a JSON object: %w", name, err)
		}
		merged = agent.MergeOpencodeConfig(merged, m).(map[string]any)
		return nil
	}
	for _, f := range opencodeConfigFiles(o) {
		b, err := regfile.Read(f, maxOpencodeConfig)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("opencode's config: %w", err)
		}
		if err := add(f, b); err != nil {
			return nil, err
		}
	}
	if v := o.Getenv("OPENCODE_CONFIG_CONTENT"); v != "" {
		if err := add("OPENCODE_CONFIG_CONTENT", []byte(v)); err != nil {
			return nil, err
		}
	}
	return merged, nil
}

// opencodeProviderOf reads provider p's part of a merged opencode config.
func opencodeProviderOf(cfg map[string]any, p string) (opencodeHost, error) {
	h := opencodeHost{client: openai.Opencode{Provider: p}}
	within := func(key string) string {
		v, _ := cfg[key].(string)
		m, ok := strings.CutPrefix(v, p+"/")
		if !ok || m == "" {
			return ""
		}
		return m
	}
	h.client.Model, h.client.SmallModel = within("model"), within("small_model")
	providers, _ := cfg["provider"].(map[string]any)
	decl, ok := providers[p].(map[string]any)
	if !ok {
		return h, nil
	}
	if opts, ok := decl["options"].(map[string]any); ok {
		h.baseURL, _ = opts["baseURL"].(string)
	}
	npm, _ := decl["npm"].(string)
	if npm != "" && npm != "@ai-sdk/openai-compatible" {
		return h, fmt.Errorf("provider %q speaks %s, not the OpenAI-compatible API strict mode serves", p, npm)
	}
	def := map[string]any{}
	for _, k := range []string{"npm", "name", "whitelist", "blacklist"} {
		if v, ok := decl[k]; ok {
			def[k] = v
		}
	}
	if models, ok := decl["models"].(map[string]any); ok {
		out := map[string]any{}
		for id, v := range models {
			m, ok := v.(map[string]any)
			if !ok {
				continue
			}
			clean := map[string]any{}
			for k, v := range m {
				if k != "headers" && k != "provider" {
					clean[k] = v
				}
			}
			out[id] = clean
		}
		def["models"] = out
	}
	if len(def) > 0 {
		h.client.Definition = def
	}
	return h, nil
}

// opencodeDefaultProvider picks the provider a strict opencode box is
// served: among those auth.json holds an API key for (ids), the one the
// host's model names, else the only one. "" when it cannot tell.
func opencodeDefaultProvider(cfg map[string]any, ids []string) string {
	model, _ := cfg["model"].(string)
	if p, _, ok := strings.Cut(model, "/"); ok {
		for _, id := range ids {
			if id == p {
				return p
			}
		}
	}
	if len(ids) == 1 {
		return ids[0]
	}
	return ""
}

// OpencodeProvider is the opencode provider a strict box is served by
// default: one with an API key in the host's auth.json, preferring the one
// the host's configured model belongs to. It returns "" and the
// candidates when there are several and the config does not choose.
func OpencodeProvider(o Options) (provider string, candidates []string, err error) {
	o, err = o.defaults()
	if err != nil {
		return "", nil, err
	}
	ids, err := cred.OpencodeAPIProviders(opencodeAuthPath(o))
	if err != nil || len(ids) == 0 {
		return "", nil, err
	}
	cfg, err := opencodeConfig(o)
	if err != nil {
		cfg = nil // the model's provider is a preference; the keys decide
	}
	if p := opencodeDefaultProvider(cfg, ids); p != "" {
		return p, nil, nil
	}
	return "", ids, nil
}

func opencodeAuthPath(o Options) string {
	return filepath.Join(o.dir("XDG_DATA_HOME", ".local/share"), "opencode", "auth.json")
}
