package transcript

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Resume opens the existing transcript at path to append to it, for the
// process that takes a launch over after its wrapper has returned (the
// background keeper): what the jail prints from then on follows what the
// wrapper wrote, and rotation counts from the file's size. Only a regular
// file of the user's, reached without a symlink, is opened.
func Resume(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("reopening transcript: %w", err)
	}
	w := &Writer{path: path, f: f}
	if err := ownRegular(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("reopening transcript %s: %w", path, err)
	}
	fi, _ := f.Stat()
	w.n = fi.Size()
	// The window sizes go on in the same record, when there is one.
	if win, err := os.OpenFile(SizesPath(path), os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0); err == nil {
		if ownRegular(win) == nil {
			wfi, _ := win.Stat()
			w.win, w.winN = win, wfi.Size()
		} else {
			win.Close()
		}
	}
	return w, nil
}

// ownRegular accepts a regular file that belongs to the user.
func ownRegular(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.Mode().IsRegular() || !ok || int(st.Uid) != os.Getuid() {
		return errors.New("it is not a regular file of yours")
	}
	return nil
}
