package opencode

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/aisan-dev/aisan/jail/shared/secret"

	"github.com/tailscale/hujson"
)

// Box is what a strict box's opencode needs of the user's
// permission rules: the box does not read the host's global config,
// OPENCODE_CONFIG, OPENCODE_CONFIG_CONTENT or OPENCODE_PERMISSION, so the
// rules those layers add come in as data.
type Box struct {
	// Rules is the permission block opencode builds from every layer of
	// the setup, as a JSON object whose keys (and patterns) are in
	// opencode's order: given as the box's first config layer, it keeps
	// that order wherever the box's own layers name the same keys.
	Rules string
	// Permission is Rules with aisan's kill rules after them (see
	// [Permission]), for the box's OPENCODE_PERMISSION, which
	// opencode merges after every layer: the values are the host's
	// whatever the box's copies of the project's files say.
	Permission string
	// AgentRules are permission blocks set per agent in layers a box does
	// not read (not [Layer.Shared]): they stay on the host.
	AgentRules []AgentRule
	// Secret names the rules left out because a key or pattern looks
	// like it holds a secret: the box's environment would show it.
	Secret []string
}

// AgentRule is one agent's permission block in a config layer.
type AgentRule struct {
	Agent, Layer string
}

// BoxRules reads the permission rules of s for a strict box. Its
// errors are those of [Permission].
func BoxRules(s Setup) (Box, error) {
	eff, err := effectivePermission(s)
	if err != nil {
		return Box{}, err
	}
	var b Box
	eff, b.Secret = withoutSecrets(eff)
	b.Rules = string(encodeObject(eff))
	b.Permission = b.Rules
	if !bashDeniedOutright(eff) {
		ours := &jsObject{}
		for _, p := range opencodeDenied {
			ours.set(p, jsValue{kind: '"', str: "deny"})
		}
		all := mergeDeep(eff, &jsObject{})
		all.set(freeKey(eff), jsValue{kind: '{', obj: ours})
		b.Permission = string(encodeObject(all))
	}
	getenv := s.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	for _, l := range s.Layers {
		if l.Shared {
			continue
		}
		agents, err := agentPermissions(l, getenv)
		if err != nil {
			return Box{}, err
		}
		for _, a := range agents {
			b.AgentRules = append(b.AgentRules, AgentRule{Agent: a, Layer: l.Name})
		}
	}
	return b, nil
}

// withoutSecrets is perm less the rules whose permission or pattern
// looks like it holds a secret, and those rules' names.
func withoutSecrets(perm *jsObject) (*jsObject, []string) {
	out := &jsObject{present: perm.present}
	var left []string
	for _, k := range perm.keys {
		v := perm.vals[k]
		if secret.Text(k) {
			left = append(left, "permission rule for a tool whose name looks like a secret")
			continue
		}
		if v.kind == '{' {
			kept := &jsObject{present: v.obj.present}
			for _, pat := range v.obj.keys {
				if secret.Text(pat) {
					left = append(left, fmt.Sprintf("permission %q: a pattern that looks like it holds a secret", k))
					continue
				}
				kept.set(pat, v.obj.vals[pat])
			}
			v = jsValue{kind: '{', obj: kept}
		}
		out.set(k, v)
	}
	return out, left
}

// agentPermissions names the agents of layer l that set a permission
// block of their own.
func agentPermissions(l Layer, getenv func(string) string) ([]string, error) {
	if len(bytes.TrimSpace(l.Data)) == 0 {
		return nil, nil
	}
	text := envRef().ReplaceAllFunc(l.Data, func(ref []byte) []byte {
		return []byte(getenv(string(ref[len("{env:") : len(ref)-1])))
	})
	if err := checkNesting(text); err != nil {
		return nil, fmt.Errorf("opencode's configuration %s: %w", l.Name, err)
	}
	v, err := hujson.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("opencode's configuration %s: %w", l.Name, err)
	}
	root, err := convert(v.Value, 0)
	if err != nil || root.kind != '{' {
		return nil, err
	}
	var out []string
	for _, key := range []string{"agent", "mode"} {
		agents, ok := root.obj.vals[key]
		if !ok || agents.kind != '{' {
			continue
		}
		for _, name := range agents.obj.keys {
			if a := agents.obj.vals[name]; a.kind == '{' && a.obj.has("permission") {
				out = append(out, name)
			}
		}
	}
	return out, nil
}

// encodeObject is o as compact JSON, its keys in o's order. Permission
// blocks hold strings and objects of strings; anything else is null.
func encodeObject(o *jsObject) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(k)
		b.Write(key)
		b.WriteByte(':')
		switch v := o.vals[k]; v.kind {
		case '"':
			s, _ := json.Marshal(v.str)
			b.Write(s)
		case '{':
			b.Write(encodeObject(v.obj))
		default:
			b.WriteString("null")
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}
