//go:build !aisanfront

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/config"
	"github.com/aisan-dev/aisan/jail/strictbox/bindspec"
	"github.com/aisan-dev/aisan/jail/strictbox/trust"
)

const configUsage = `
Usage: aisan config [--json]
       aisan config --spec NAME

Prints the launch options in effect here (in this directory's
repository), and where each comes from: the launchers' command line wins,
then the key's AISAN_* variable, then the repository's section of the
configuration, then its defaults.

The configuration is $XDG_CONFIG_HOME/aisan/config.toml (by default
~/.config/aisan/config.toml). Its keys are the launchers' options (a flag's
name with _ for -, allow_hosts for --allow-host), limits (as
AISAN_LIMITS: "memory=4G cpu=200% tasks=512"), bus_talk (as
AISAN_BUS_TALK), budget and rate (as --budget and --rate); a table
[repo."PATH"] holds one repository's, by its real path:

  strict = false
  binds  = ["go"]

  [repo."/home/me/src/app"]
  strict      = true
  allow_hosts = ["goproxy.example.com"]

Options a launcher does not take are left out of its launches (api_key
for run, say); the strict ones apply only to strict launches. A flag's
list replaces the configured one. aisan reads the file only when no strict
box can write where it lies (or you approved it with 'aisan trust').

With --spec, prints the bind spec aisan ships by that name (go, node,
python, rust), which --binds NAME and binds = ["NAME"] use.

Options:
  --json       print a JSON object instead
  --spec NAME  print a shipped bind spec
  -h, --help   show this help

Example:
  aisan config
  AISAN_STRICT=1 aisan config --json
`

func runConfig(ctx context.Context, args []string) error {
	fs := newFlagSet("config", configUsage)
	asJSON := fs.Bool("json", false, "")
	spec := fs.String("spec", "", "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if *spec != "" {
		data, ok := bindspec.ShippedSource(*spec)
		if !ok {
			return withHint(usageErr("config: aisan ships no bind spec named %q", *spec), "the shipped ones are "+strings.Join(bindspec.Shipped(), ", "))
		}
		_, err := os.Stdout.Write(data)
		return err
	}
	path, err := configPath()
	if err != nil {
		return err
	}
	keys := configKeys()
	ss, c, repo, err := settings(keys, nil)
	if err != nil {
		return err
	}
	section := ""
	if c != nil {
		for _, r := range c.Repos() {
			if sameRepo(r, repo) {
				section = r
				break
			}
		}
	}
	if *asJSON {
		return printConfigJSON(path, c != nil, repo, section, ss)
	}
	file := path
	if c == nil {
		file += " (none)"
	}
	fmt.Printf("configuration  %s\n", trust.Printable(file))
	where := "(no section)"
	if section != "" {
		where = fmt.Sprintf("[repo.%q]", section)
	}
	fmt.Printf("repository     %s %s\n\n", trust.Printable(repo), trust.Printable(where))
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tFROM")
	for _, s := range ss {
		v := "-"
		if s.Source.From != config.Unset {
			v = strings.Join(shownValues(s), ", ")
			if s.Kind == config.List {
				v = "[" + v + "]"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Key, trust.Printable(v), trust.Printable(s.Source.String()))
	}
	return tw.Flush()
}

// shownValues are s's values as config prints them: an env entry whose
// value looks secret (by its name or its value, as explain judges) has the
// value replaced, so the output can be shown or pasted.
func shownValues(s config.Setting) []string {
	if s.Key != "env" {
		return s.Values
	}
	out := make([]string, len(s.Values))
	for i, kv := range s.Values {
		out[i] = kv
		if k, v, ok := strings.Cut(kv, "="); ok && jail.IsSecret(k, v) {
			out[i] = k + "=<redacted>"
		}
	}
	return out
}

func printConfigJSON(path string, exists bool, repo, section string, ss []config.Setting) error {
	out := configJSON{Configuration: path, Exists: exists, Repository: repo, Section: section, Settings: []settingJSON{}}
	for _, s := range ss {
		j := settingJSON{Key: s.Key, From: [...]string{"unset", "flag", "env", "repo", "defaults"}[s.Source.From]}
		if s.Source.From != config.Unset {
			j.Where = s.Source.String()
			switch s.Kind {
			case config.Bool:
				j.Value = s.Bool()
			case config.String:
				j.Value = strings.Join(s.Values, "")
			default:
				j.Value = shownValues(s)
			}
		}
		out.Settings = append(out.Settings, j)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// configJSON is 'aisan config --json'.
type configJSON struct {
	Configuration string        `json:"configuration"`
	Exists        bool          `json:"exists"`
	Repository    string        `json:"repository"`
	Section       string        `json:"section,omitempty"`
	Settings      []settingJSON `json:"settings"`
}

type settingJSON struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
	From  string `json:"from"`
	Where string `json:"where,omitempty"`
}
