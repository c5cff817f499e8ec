// Package atomicfile is aisan's one way to replace a file: a new file in
// the same directory, created exclusively and without following a link (so
// nothing planted at the temporary name is written through), renamed over
// the target. A reader sees the old content or the new, never a torn file,
// and a link at the target is replaced, never followed.
//
// It is a leaf (standard library only) so that jail, hooks, systemd and
// egress can share it.
package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Options say how the new file is made.
type Options struct {
	// Mode is the new file's permission bits (0600 when zero).
	Mode fs.FileMode
	// Sync makes the write durable (fsync of the file and of its
	// directory) before Write returns: for the user's own files (agent
	// settings, credentials, unit files), not for aisan's records.
	Sync bool
	// Owner, when set, is given the new file (best effort: root fixing a
	// user's file must not leave it owned by root, and a user may not
	// give a file to a group they are not in).
	Owner *Owner
	// BeforeRename runs once the new file is complete, right before it
	// replaces the old one; an error leaves the old one as it was.
	BeforeRename func() error
}

// Owner is a file's owner.
type Owner struct{ UID, GID int }

// Write replaces path with data.
func Write(path string, data []byte, o Options) (err error) {
	mode := o.Mode
	if mode == 0 {
		mode = 0o600
	}
	dir := filepath.Dir(path)
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(dir, "."+filepath.Base(path)+".aisan-"+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, mode)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("writing %s: %w", path, err)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	// The umask narrowed what OpenFile asked for.
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if o.Owner != nil && (o.Owner.UID != os.Geteuid() || o.Owner.GID != os.Getegid()) {
		_ = f.Chown(o.Owner.UID, o.Owner.GID)
	}
	if o.Sync {
		if err = f.Sync(); err != nil {
			return err
		}
	}
	if err = f.Close(); err != nil {
		return err
	}
	if o.BeforeRename != nil {
		if err = o.BeforeRename(); err != nil {
			return err
		}
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	if o.Sync {
		d, derr := os.Open(dir)
		if derr != nil {
			return nil
		}
		defer d.Close()
		_ = d.Sync()
	}
	return nil
}
