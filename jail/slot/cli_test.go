package slot

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestPruneRacesLaunches: 'aisan prune --all', run over and over while
// launches take, hold and end slots in one worktree, removes ended slots
// only: a held slot's record and transcript are there the whole time.
func TestPruneRacesLaunches(t *testing.T) {
	home, wt := newTree(t)
	reg := openReg(t, home)
	stop := make(chan struct{})
	var pruner sync.WaitGroup
	var removed int
	pruner.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			r, _, errs := reg.PruneNow(PrunePolicy{}, time.Now())
			removed += len(r)
			for _, err := range errs {
				if !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("prune: %v", err)
				}
			}
		}
	})
	var launches sync.WaitGroup
	for range 3 {
		launches.Go(func() {
			for range 40 {
				s, err := reg.Acquire(wt, "run")
				if err != nil {
					t.Error(err)
					return
				}
				tr := s.TranscriptPath()
				os.MkdirAll(filepath.Dir(tr), 0o700)
				if err := os.WriteFile(tr, []byte("output\n"), 0o600); err != nil {
					t.Error(err)
				}
				for range 5 {
					rec, err := readRecord(reg.recordPath(s.Name()), s.Name())
					if err != nil || !rec.Start.Equal(s.Record().Start) {
						t.Errorf("the record of held slot %s: %v", s.Name(), err)
					}
					if _, err := os.Stat(tr); err != nil {
						t.Errorf("the transcript of held slot %s: %v", s.Name(), err)
					}
					time.Sleep(time.Millisecond)
				}
				s.Finish(0)
				s.Release()
			}
		})
	}
	launches.Wait()
	close(stop)
	pruner.Wait()
	if removed == 0 {
		t.Errorf("prune removed no ended slot while launches came and went")
	}
}

// TestLaunchInfo: an ended launch keeps its mode, command and status
// beside its transcript, and a slot keeps its last launches only.
func TestLaunchInfo(t *testing.T) {
	home, wt := newTree(t)
	reg := openReg(t, home)
	var name string
	for i := range DefaultPrune.MaxLaunches + 2 {
		s, err := reg.Acquire(wt, "run")
		if err != nil {
			t.Fatal(err)
		}
		name = s.Name()
		os.MkdirAll(filepath.Dir(s.TranscriptPath()), 0o700)
		os.WriteFile(s.TranscriptPath(), []byte("x"), 0o600)
		s.Update(func(r *Record) {
			r.Command = "make"
			if i%2 == 1 {
				r.Mode = "strict"
			}
		})
		if err := s.Finish(i); err != nil {
			t.Fatal(err)
		}
		s.Release()
		// A second apart at most, so each launch has its own name.
		time.Sleep(10 * time.Millisecond)
	}
	ls, err := reg.Launches(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != DefaultPrune.MaxLaunches {
		var names []string
		for _, l := range ls {
			names = append(names, filepath.Base(l.Path))
		}
		t.Fatalf("%d launches kept, want %d: %q", len(ls), DefaultPrune.MaxLaunches, names)
	}
	last := ls[len(ls)-1].Info
	if last == nil || last.Command != "make" || last.ExitStatus == nil || *last.ExitStatus != DefaultPrune.MaxLaunches+1 || last.Mode != "strict" || last.Kind != "run" {
		t.Errorf("the last launch's info: %+v", last)
	}
	if first := ls[0].Info; first == nil || *first.ExitStatus != 2 || first.Mode != "" {
		t.Errorf("the first kept launch's info: %+v", first)
	}
	infos, _ := filepath.Glob(filepath.Join(home, "transcripts", name, "*.json"))
	if len(infos) != DefaultPrune.MaxLaunches {
		t.Errorf("%d launch infos left, want one per kept launch", len(infos))
	}
}

// TestKillNote: the note 'aisan kill' leaves reaches its launch's wrapper
// once; a note for another launch is dropped unsaid.
func TestKillNote(t *testing.T) {
	home, wt := newTree(t)
	reg := openReg(t, home)
	reg.By = "'aisan kill' (PID 7 on /dev/pts/9)"
	s, err := reg.Acquire(wt, "claude")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	e, err := reg.Lookup(s.Name())
	if err != nil {
		t.Fatal(err)
	}
	reg.leaveKillNote(e, syscall.SIGTERM)
	reg.leaveKillNote(e, syscall.SIGKILL)
	line, ok := s.TakeKillNote()
	want := "slot " + s.Name() + " was ended by 'aisan kill' (PID 7 on /dev/pts/9) with SIGTERM, then SIGKILL"
	if !ok || line != want {
		t.Errorf("note %q, %v; want %q", line, ok, want)
	}
	if _, ok := s.TakeKillNote(); ok {
		t.Errorf("the note was said twice")
	}
	e.Start = e.Start.Add(-time.Hour)
	reg.leaveKillNote(e, syscall.SIGTERM)
	if line, ok := s.TakeKillNote(); ok {
		t.Errorf("another launch's note was said: %q", line)
	}
	if _, err := os.Stat(reg.killNotePath(s.Name())); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a stale note was left: %v", err)
	}
	// A forged note with control characters prints inert.
	os.WriteFile(reg.killNotePath(s.Name()), []byte(`{"start":"`+e.Start.Add(time.Hour).Format(time.RFC3339Nano)+`","by":"x\u001b[2J","signal":"TERM"}`), 0o600)
	if line, _ := s.TakeKillNote(); strings.ContainsRune(line, 0x1b) {
		t.Errorf("note printed a control: %q", line)
	}
}
