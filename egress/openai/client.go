package openai

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// CodexKeyVar is the variable codex reads the provider key from (the
// placeholder or the per-box token; never a credential).
const CodexKeyVar = "AISAN_CODEX_API_KEY"

// codexSettings are codex's settings for a box: the custom provider "aisan"
// at baseURL, and the switches that stop its other traffic (measured with
// codex-cli 0.171.0). Values are TOML literals. Top-level keys come first.
func codexSettings(baseURL string) [][2]string {
	q := strconv.Quote
	return [][2]string{
		{"model_provider", q("aisan")},
		{"check_for_update_on_startup", "false"},
		{"web_search", q("disabled")},
		{"model_providers.aisan.name", q("aisan")},
		{"model_providers.aisan.base_url", q(baseURL)},
		{"model_providers.aisan.env_key", q(CodexKeyVar)},
		{"model_providers.aisan.wire_api", q("responses")},
		{"model_providers.aisan.requires_openai_auth", "false"},
		{"model_providers.aisan.supports_websockets", "false"},
		{"analytics.enabled", "false"},
		{"feedback.enabled", "false"},
		{"features.plugins", "false"},
		{"features.apps", "false"},
	}
}

// CodexConfigArgs are codex's -c overrides routing it to baseURL. They
// beat anything in the box-writable CODEX_HOME/config.toml, which is why
// they are the preferred form.
func CodexConfigArgs(baseURL string) []string {
	var args []string
	for _, kv := range codexSettings(baseURL) {
		args = append(args, "-c", kv[0]+"="+kv[1])
	}
	return args
}

// CodexConfigTOML is the same configuration as a config.toml snippet.
func CodexConfigTOML(baseURL string) string {
	var b strings.Builder
	table := ""
	for _, kv := range codexSettings(baseURL) {
		t, k := "", kv[0]
		if i := strings.LastIndexByte(k, '.'); i >= 0 {
			t, k = k[:i], k[i+1:]
		}
		if t != table {
			fmt.Fprintf(&b, "\n[%s]\n", t)
			table = t
		}
		fmt.Fprintf(&b, "%s = %s\n", k, kv[1])
	}
	return strings.TrimPrefix(b.String(), "\n")
}

// CodexBoxEnv is the box environment codex needs besides its config.
func CodexBoxEnv(baseURL, token string) []string {
	if token == "" {
		token = Placeholder
	}
	return []string{CodexKeyVar + "=" + token, "OPENAI_BASE_URL=" + baseURL}
}

// OpenAIBoxEnv is the environment for an OpenAI SDK client in an `aisan
// run` box (the same base URL and placeholder, under the SDK's names).
func OpenAIBoxEnv(baseURL, token string) []string {
	if token == "" {
		token = Placeholder
	}
	return []string{"OPENAI_BASE_URL=" + baseURL, "OPENAI_API_KEY=" + token, CodexKeyVar + "=" + token}
}

// Opencode is what a box's opencode needs to reach one provider through
// its endpoint: the user's model choice and, for a provider the host's
// config declares (one not in opencode's built-in catalog), that
// declaration with everything that could carry a secret or another
// address taken out.
type Opencode struct {
	Provider string
	// Model and SmallModel are model ids within Provider; "" leaves
	// opencode's own choice.
	Model, SmallModel string
	// Definition is the provider's declaration (npm, name, models), nil
	// for a catalog provider; Config adds the endpoint as its baseURL.
	Definition map[string]any
}

// Models are the model ids the host names for the provider: Model,
// SmallModel and those the declaration lists, sorted, each once.
//
// A declared model may set "id", the name opencode sends the provider in
// its place (its key is then only opencode's name for it): that id is the
// one served.
func (c Opencode) Models() []string {
	models, _ := c.Definition["models"].(map[string]any)
	apiID := func(m string) string {
		if d, ok := models[m].(map[string]any); ok {
			if id, ok := d["id"].(string); ok && id != "" {
				return id
			}
		}
		return m
	}
	var out []string
	for _, m := range []string{c.Model, c.SmallModel} {
		if m != "" {
			out = append(out, apiID(m))
		}
	}
	for m := range models {
		out = append(out, apiID(m))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Config is opencode's configuration (OPENCODE_CONFIG_CONTENT) pointing
// the provider at baseURL. opencode merges it over every config file, so
// the box's own files cannot route the provider elsewhere.
func (c Opencode) Config(baseURL string) string {
	def := map[string]any{}
	for k, v := range c.Definition {
		def[k] = v
	}
	def["options"] = map[string]any{"baseURL": baseURL}
	cfg := map[string]any{
		"share":      "disabled",
		"autoupdate": false,
		"provider":   map[string]any{c.Provider: def},
	}
	if c.Model != "" {
		cfg["model"] = c.Provider + "/" + c.Model
		small := c.SmallModel
		if small == "" {
			small = c.Model
		}
		cfg["small_model"] = c.Provider + "/" + small
	}
	b, _ := json.Marshal(cfg)
	return string(b)
}

// BoxEnv is the box environment for opencode with the provider routed to
// baseURL, the placeholder (or per-box token) as its key, and its update,
// catalog, LSP and npm traffic off (measured with 1.18.33).
func (c Opencode) BoxEnv(baseURL, token string) []string {
	if token == "" {
		token = Placeholder
	}
	auth, _ := json.Marshal(map[string]any{c.Provider: map[string]string{"type": "api", "key": token}})
	return []string{
		"OPENCODE_CONFIG_CONTENT=" + c.Config(baseURL),
		"OPENCODE_AUTH_CONTENT=" + string(auth),
		"OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
		"npm_config_offline=true",
	}
}
