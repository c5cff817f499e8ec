package slot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Launch is one kept transcript of a slot: one launch's output.
type Launch struct {
	// N numbers the slot's kept launches from 1, the oldest.
	N int
	// Path is the transcript (its current segment).
	Path string
	// Start is when the launch began.
	Start time.Time
	// Size is the transcript's size in bytes, older segment included.
	Size int64
	// Info is what was recorded of the launch when it ended; nil for
	// the launch that is running, for one whose end nobody recorded, and
	// for launches older than the record of it.
	Info *LaunchInfo
}

// LaunchInfo is what the state dir keeps of one ended launch beside its
// transcript (<stamp>.json): the slot record is rewritten by the next
// launch, this is not.
type LaunchInfo struct {
	Kind       string    `json:"kind"`
	Mode       string    `json:"mode,omitempty"`
	Command    string    `json:"command,omitempty"`
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
	ExitStatus *int      `json:"exit_status,omitempty"`
}

// InfoOf is the launch info of a record.
func InfoOf(rec Record) LaunchInfo {
	return LaunchInfo{Kind: rec.Kind, Mode: rec.Mode, Command: rec.Command, Start: rec.Start, End: rec.End, ExitStatus: cloneRecord(rec).ExitStatus}
}

// launchInfoPath is where the info of the launch whose transcript is at
// path is kept.
func launchInfoPath(path string) string {
	return strings.TrimSuffix(path, ".log") + ".json"
}

// writeLaunchInfo keeps rec's launch info beside its transcript, when the
// transcript's directory exists (a launch that failed early has none).
// It is a courtesy for 'aisan logs --launches': a failure changes nothing
// else.
func writeLaunchInfo(rec Record) {
	if rec.Transcript == "" || !strings.HasSuffix(rec.Transcript, ".log") {
		return
	}
	if fi, err := os.Lstat(filepath.Dir(rec.Transcript)); err != nil || !fi.IsDir() {
		return
	}
	data, err := json.Marshal(InfoOf(rec))
	if err != nil {
		return
	}
	writeFileAtomic(launchInfoPath(rec.Transcript), append(data, '\n'))
}

// readLaunchInfo reads the info kept beside the transcript at path, if
// there is one of aisan's.
func readLaunchInfo(path string, buf *[]byte) *LaunchInfo {
	data, err := readFile(launchInfoPath(path), buf)
	if err != nil {
		return nil
	}
	var li LaunchInfo
	if json.Unmarshal(data, &li) != nil || li.Kind == "" {
		return nil
	}
	return &li
}

// stampLayout names transcripts after their launch's start (see
// newTranscriptPath).
const stampLayout = "20060102T150405Z"

// parseLaunchName reads a transcript file name: "<stamp>.log" or
// "<stamp>-<i>.log", the i-th launch in that second. ok is false for any
// other file (an older segment, a size record, something else).
func parseLaunchName(name string) (start time.Time, i int, ok bool) {
	base, found := strings.CutSuffix(name, ".log")
	if !found {
		return time.Time{}, 0, false
	}
	stamp, suffix, dashed := strings.Cut(base, "-")
	i = 1
	if dashed {
		n, err := strconv.Atoi(suffix)
		if err != nil || n < 2 || strconv.Itoa(n) != suffix {
			return time.Time{}, 0, false
		}
		i = n
	}
	t, err := time.Parse(stampLayout, stamp)
	if err != nil || t.Format(stampLayout) != stamp {
		return time.Time{}, 0, false
	}
	return t, i, true
}

// Launches lists the kept transcripts of the slot called name, oldest
// first. A slot with none (or no directory) has an empty list.
func (r *Registry) Launches(name string) ([]Launch, error) {
	if !ValidName(name) {
		return nil, &UnknownSlotError{Name: name}
	}
	ls, err := launchFiles(filepath.Join(r.home, "transcripts", name))
	if err != nil {
		return nil, fmt.Errorf("listing the launches of slot %q: %w", name, err)
	}
	var buf []byte
	for i := range ls {
		l := &ls[i]
		l.Info = readLaunchInfo(l.Path, &buf)
		for _, seg := range []string{l.Path, l.Path + ".1"} {
			if fi, err := os.Lstat(seg); err == nil && fi.Mode().IsRegular() {
				l.Size += fi.Size()
			}
		}
	}
	return ls, nil
}

// launchFiles lists the launches whose transcripts are in dir, oldest
// first, numbered, from their names alone: no Info, no Size. A missing
// dir has none.
func launchFiles(dir string) ([]Launch, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	type keyed struct {
		l Launch
		i int
	}
	var ls []keyed
	for _, de := range des {
		start, i, ok := parseLaunchName(de.Name())
		if !ok || !de.Type().IsRegular() {
			continue
		}
		ls = append(ls, keyed{Launch{Path: filepath.Join(dir, de.Name()), Start: start}, i})
	}
	sort.Slice(ls, func(a, b int) bool {
		if !ls[a].l.Start.Equal(ls[b].l.Start) {
			return ls[a].l.Start.Before(ls[b].l.Start)
		}
		return ls[a].i < ls[b].i
	})
	out := make([]Launch, len(ls))
	for i, k := range ls {
		out[i] = k.l
		out[i].N = i + 1
	}
	return out, nil
}
