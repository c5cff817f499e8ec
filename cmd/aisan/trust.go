//go:build !aisanfront

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"

	"github.com/aisan-dev/aisan/jail/strictbox/trust"
	"github.com/aisan-dev/aisan/jail/strictbox/truststore"
)

const trustUsage = `
Usage: aisan trust FILE...
       aisan trust --list
       aisan trust --revoke FILE...

Approves the exact content of files that define a strict box: bind specs
(--binds) and their includes, and egress files (--egress reapi=FILE,
--egress grpc:NAME=FILE). aisan refuses such a file when it lies where a
strict box can write (the repository or working directory of this launch
or of any earlier box, anything a box was given read-write, aisan's own
state), unless you approved its content here; once it changes, whoever
changed it, it is refused with the diff until you approve it again. Read
the file before you approve it: it decides what the next box gets.

Approvals do not apply to the token_file or token_command an egress file
names: the host reads or runs those while the box lives, so they are never
taken from where a box can write.

Approvals are kept in aisan's state ($AISAN_HOME/trust), which no jail or
box can write, by the file's absolute path.

Options:
  --list       list the approved files, and whether each still has the
               approved content
  --revoke     drop the approval of each FILE
  -h, --help   show this help

Example:
  aisan trust ./aisan-binds.toml
`

func runTrust(ctx context.Context, args []string) error {
	fs := newFlagSet("trust", trustUsage)
	list := fs.Bool("list", false, "")
	revoke := fs.Bool("revoke", false, "")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	hint := "run 'aisan trust --help' for usage"
	switch {
	case *list && *revoke:
		return withHint(usageErr("trust: --list and --revoke cannot be combined"), hint)
	case *list && len(files) > 0:
		return withHint(usageErr("trust: --list takes no file (%q)", files[0]), hint)
	case !*list && len(files) == 0:
		return withHint(usageErr("trust: no file given"), "aisan trust FILE, --revoke FILE or --list")
	case slices.Contains(files, ""):
		return withHint(usageErr("trust: an empty file name"), "aisan trust FILE, --revoke FILE or --list")
	}
	store, err := truststore.Open()
	if err != nil {
		return err
	}
	switch {
	case *list:
		return listTrust(store)
	case *revoke:
		var failed []error
		for _, f := range files {
			if err := store.Revoke(f); err != nil {
				failed = append(failed, err)
				continue
			}
			abs, _ := filepath.Abs(f)
			fmt.Println("revoked", trust.Printable(abs))
		}
		return joinErrors(failed)
	}
	places, err := truststore.LaunchPlaces(store)
	if err != nil {
		return err
	}
	var failed []error
	for _, f := range files {
		file, err := trust.ReadFile(f, trust.MaxFile)
		if err != nil {
			failed = append(failed, withHint(err, "name a regular file of at most 1 MiB"))
			continue
		}
		a, err := store.Approve(file)
		if err != nil {
			failed = append(failed, err)
			continue
		}
		fmt.Printf("trusted %s (sha256 %s)\n", trust.Printable(a.Path), a.SHA256[:16])
		if _, held := places.Holds(file); !held {
			fmt.Fprintf(os.Stderr, "aisan: note: no strict box can write where %s lies now; it needs no approval, but keeps this one\n", trust.Printable(a.Path))
		}
	}
	return joinErrors(failed)
}

// listTrust prints the approvals and whether each file still matches.
func listTrust(store *trust.Store) error {
	approvals, problems := store.List()
	warn(problems)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STATE\tAPPROVED\tSHA256\tFILE")
	for _, a := range approvals {
		state := "ok"
		f, err := trust.ReadFile(a.Path, trust.MaxFile)
		switch {
		case errors.Is(err, os.ErrNotExist):
			state = "missing"
		case err != nil:
			state = "unreadable"
		case trust.Sum(f.Data) != a.SHA256:
			state = "changed"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", state, a.Approved.Local().Format("2006-01-02 15:04"), a.SHA256[:16], trust.Printable(a.Path))
	}
	return tw.Flush()
}

// trustedReader reads the files that define a box (what, "bind spec"),
// each only if no box can write where it lies or the user approved its
// content: the check sees the very bytes the caller then parses.
func trustedReader(what string) (func(string) ([]byte, error), error) {
	store, err := truststore.Open()
	if err != nil {
		return nil, err
	}
	places, err := truststore.LaunchPlaces(store)
	if err != nil {
		return nil, err
	}
	return func(path string) ([]byte, error) {
		f, err := trust.ReadFile(path, trust.MaxFile)
		if err != nil {
			return nil, err
		}
		if err := store.Check(what, f, places); err != nil {
			return nil, err
		}
		return f.Data, nil
	}, nil
}
