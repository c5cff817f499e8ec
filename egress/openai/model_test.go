package openai

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aisan-dev/aisan/egress"
	"github.com/aisan-dev/aisan/egress/egresstest"
)

// TestCompatibleModels: an OpenAI-compatible backend serves the models
// the host names and no other, whatever the name says; a model name alone
// can switch on tools the provider runs (its search models, a router's
// ":online"). A refusal never reaches the upstream and names "model".
func TestCompatibleModels(t *testing.T) {
	host := []string{"llama-3.3-70b", "llama-3.1-8b"}
	tests := []struct {
		models []string
		model  string
		want   string // "" for served, else a part of the refusal
	}{
		{host, "llama-3.3-70b", ""},
		{host, "llama-3.1-8b", ""},
		{host, "groq/compound", `model: \"groq/compound\" is not a model the host names (llama-3.3-70b, llama-3.1-8b)`},
		{host, "compound-beta", "is not a model the host names"},
		{host, "gpt-4o-search-preview", "is not a model the host names"},
		{host, "perplexity/sonar", "is not a model the host names"},
		{host, "llama-3.3-70b:online", `model: must not end with \":online\"`},
		{host, "LLAMA-3.3-70B", "is not a model the host names"},
		{host, "", "is not a model the host names"},
		{nil, "llama-3.3-70b", "the host names no model for this provider"},
	}
	for _, tt := range tests {
		up := egresstest.NewUpstream(t, egresstest.JSON(200, `{"id":"c","object":"chat.completion","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`))
		client := egresstest.Serve(t, NewCompatible("groq", up.URL, &egresstest.Source{Value: "gsk-real"}, tt.models), egress.Options{Transport: egresstest.Transport()})
		req, _ := http.NewRequest("POST", "http://box/chat/completions", strings.NewReader(`{"model":"`+tt.model+`","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+Placeholder)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		reached := len(up.Requests()) > 0
		if tt.want == "" {
			if resp.StatusCode != 200 || !reached {
				t.Errorf("model %q of %q: %d, reached %v, %s; want it served", tt.model, tt.models, resp.StatusCode, reached, b)
			}
			continue
		}
		if resp.StatusCode != http.StatusForbidden || reached || !strings.Contains(string(b), tt.want) {
			t.Errorf("model %q of %q: %d, reached %v, %s; want 403 saying %q", tt.model, tt.models, resp.StatusCode, reached, b, tt.want)
		}
	}
}

func TestOpencodeModels(t *testing.T) {
	c := Opencode{Provider: "p", Model: "big", SmallModel: "small", Definition: map[string]any{"models": map[string]any{"big": map[string]any{}, "other": map[string]any{}}}}
	if got := strings.Join(c.Models(), ","); got != "big,other,small" {
		t.Errorf("Models = %s; want big,other,small", got)
	}
	if got := (Opencode{Provider: "p"}).Models(); len(got) != 0 {
		t.Errorf("Models of a host naming none = %q; want none", got)
	}
}

// TestOpencodeModelsAPIID: a declared model whose "id" names the model
// the provider is sent (opencode's api.id: model.id ?? key) is served by
// that id, which is what the box's opencode sends.
func TestOpencodeModelsAPIID(t *testing.T) {
	c := Opencode{Provider: "p", Model: "fast", Definition: map[string]any{"models": map[string]any{
		"fast":  map[string]any{"id": "llama-3.3-70b-versatile"},
		"plain": map[string]any{},
	}}}
	got := c.Models()
	if !strings.Contains(strings.Join(got, ","), "llama-3.3-70b-versatile") || !strings.Contains(strings.Join(got, ","), "plain") {
		t.Errorf("Models = %q; want the declared api id llama-3.3-70b-versatile and plain", got)
	}
	if err := CheckModel(map[string]any{"model": "llama-3.3-70b-versatile"}, got); err != nil {
		t.Errorf("the api id opencode sends is refused: %v", err)
	}
}
