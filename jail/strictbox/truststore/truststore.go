// Package truststore opens the user's approvals (package trust) where
// aisan keeps them, with every state directory aisan has counted as a
// place boxes can write.
//
// It is apart from package strictbox because the command line reads the
// configuration through it on every launch, deny-list ones included, and
// that path must not link the strict box's proxies.
package truststore

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/aisan-dev/aisan/jail"
	"github.com/aisan-dev/aisan/jail/slot"
	"github.com/aisan-dev/aisan/jail/strictbox/gitpin"
	"github.com/aisan-dev/aisan/jail/strictbox/trust"
)

// Open is the user's approvals, in aisan's state.
func Open() (*trust.Store, error) {
	home, err := slot.Home()
	if err != nil {
		return nil, err
	}
	var state []string
	if u, err := os.UserHomeDir(); err == nil {
		state = append(state, filepath.Join(u, ".aisan"))
	}
	if rt := jail.RuntimeDir(os.Getenv); rt != "" {
		state = append(state, filepath.Join(rt, "aisan"))
	}
	return trust.Open(home, state...), nil
}

// LaunchPlaces are the places a box can write, as a launch from here
// sees them: the recorded ones, and this directory and its repository,
// which the box about to start is given.
func LaunchPlaces(store *trust.Store) (trust.Places, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("finding the working directory: %w", err)
	}
	return store.Places(wd, gitpin.Find(wd))
}
