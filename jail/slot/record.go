package slot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/aisan-dev/aisan/jail/shared/atomicfile"

	"golang.org/x/sys/unix"
)

// Record is what the registry knows about one slot: one JSON file,
// slots/<slot>.json. It never holds the agent's arguments (they may carry
// whole prompts or secrets) — only where and what ran, and how it ended.
type Record struct {
	// Slot is the slot's name; it equals the file's base name.
	Slot string `json:"slot"`
	// Kind is the agent kind: claude, codex, opencode, run…
	Kind string `json:"kind"`
	// Worktree is the real path of the directory the agent was jailed in.
	Worktree string `json:"worktree"`
	// WrapperPID is the aisan process holding the lock. Shown, never
	// signalled: the PID may have been reused since.
	WrapperPID int `json:"wrapper_pid"`
	// WrapperStart is the holder's start time (clock ticks since boot, as
	// in /proc/PID/stat), recorded when the lock was taken: with
	// WrapperPID it names the holder exactly, so a slot whose lock file
	// went missing is still seen as held while its holder lives.
	WrapperStart uint64 `json:"wrapper_start,omitempty"`
	// InitPID is the host PID of the jail's init (PID 1 of its namespace),
	// 0 until the jail has started.
	InitPID int `json:"init_pid,omitempty"`
	// PidNSInode is the inode of the jail's PID namespace, as bwrap's
	// --info-fd reports it and stat(/proc/InitPID/ns/pid) shows it. It is
	// what makes InitPID safe to signal.
	PidNSInode uint64 `json:"pidns_inode,omitempty"`
	// InitStart is the init's start time (clock ticks since boot, as in
	// /proc/PID/stat), read when the jail started. With InitPID and
	// PidNSInode it names the init exactly, by what aisan saw and the
	// kernel keeps, nothing the jail can write: this is what a kill
	// proves (see [PinInit]).
	InitStart uint64 `json:"init_start,omitempty"`
	// Start is when the slot was acquired.
	Start time.Time `json:"start"`
	// End is when the agent ended; zero while it runs, and zero forever if
	// the wrapper died without recording it.
	End time.Time `json:"end,omitzero"`
	// ExitStatus is the agent's status (128+signal when killed); nil until
	// End is recorded.
	ExitStatus *int `json:"exit_status,omitempty"`
	// Transcript is the path of this launch's transcript.
	Transcript string `json:"transcript"`
	// Unit is the systemd unit the jail runs in, when there is one.
	Unit string `json:"unit,omitempty"`
	// MaxRuntime is a headless service's runtime cap; interactive slots
	// have none and are never stopped for running long.
	MaxRuntime time.Duration `json:"max_runtime,omitempty"`
	// Mode is "strict" for an allow-list box, "" for the deny-list jail.
	Mode string `json:"mode,omitempty"`
	// Command is the base name of the program the launch ran (claude,
	// make, …), never its arguments.
	Command string `json:"command,omitempty"`
	// AgentEnd is when the agent exited while processes it left behind
	// kept its jail alive; from then on a keeper process, which
	// WrapperPID then names, holds the slot until the jail's last process
	// ends. Zero when the jail ended with its agent.
	AgentEnd time.Time `json:"agent_end,omitzero"`
	// AgentStatus is the agent's exit status, set with AgentEnd; the
	// wrapper has returned it to the shell already.
	AgentStatus *int `json:"agent_status,omitempty"`
}

// CorruptError reports a registry file that cannot be used. The file is
// left as it is, for a human to look at.
type CorruptError struct {
	Path string
	Err  error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("skipping corrupt registry file %s: %v (it is left in place; move it away to silence this)", e.Path, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// readRecord reads and checks the record for name at path. A file that
// does not parse, or that names another slot, is a *CorruptError.
func readRecord(path, name string) (Record, error) {
	var rr recordReader
	var r Record
	err := rr.read(path, name, &r)
	return r, err
}

// readRecordBytes is readRecord that also returns the file's bytes.
func readRecordBytes(path, name string) (Record, []byte, error) {
	var buf []byte
	data, err := readFile(path, &buf)
	if err != nil {
		return Record{}, nil, err
	}
	r, err := parseRecord(path, name, data)
	return r, data, err
}

// parseRecord decodes data, read from path, as the record for name.
func parseRecord(path, name string, data []byte) (Record, error) {
	var rr recordReader
	var r Record
	err := rr.parse(path, name, data, &r)
	return r, err
}

// recordReader reads records one after another through one buffer and one
// JSON decoder. Listing gives each of its workers one: a decoder and its
// read buffer per record were half of what a list of a thousand slots
// allocated, and on a machine where fresh memory costs a page fault, about
// a tenth of its time.
//
// The decoder sees the records as one stream of JSON values. Each decode
// stops at its record's closing brace (an object's end needs no look
// ahead), and a record counts only when nothing but white space follows it
// in its file. A decoder that failed, or that might hold bytes of a file
// beyond its record, is dropped, so that no record is ever read with
// another one's bytes.
type recordReader struct {
	buf  []byte
	dec  *json.Decoder
	rest recordBytes
}

// recordBytes is the decoder's source: the unread part of the record in
// hand, then io.EOF until the next one.
type recordBytes struct{ b []byte }

func (r *recordBytes) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

// read reads the record for name at path into *r: the caller's memory,
// so that a list of a thousand slots decodes each record where it is kept
// instead of into one more copy. *r is the zero Record on error.
func (rr *recordReader) read(path, name string, r *Record) error {
	data, err := readFile(path, &rr.buf)
	if err != nil {
		*r = Record{}
		return err
	}
	return rr.parse(path, name, data, r)
}

// parse decodes data, read from path, as the record for name into *r
// (the zero Record on error).
func (rr *recordReader) parse(path, name string, data []byte, r *Record) error {
	err := rr.decode(data, r)
	if err != nil {
		rr.dec = nil
		err = &CorruptError{Path: path, Err: err}
	} else if r.Slot != name {
		err = &CorruptError{Path: path, Err: fmt.Errorf("it names slot %q, not %q", r.Slot, name)}
	} else if r.Kind == "" || r.WrapperPID <= 0 || r.Start.IsZero() {
		err = &CorruptError{Path: path, Err: errors.New("it lacks the kind, wrapper PID or start time every aisan record has")}
	}
	if err != nil {
		*r = Record{}
	}
	return err
}

// decode decodes the one JSON object data must hold into *r, whatever
// *r held before.
func (rr *recordReader) decode(data []byte, r *Record) error {
	if rr.dec == nil {
		rr.dec = json.NewDecoder(&rr.rest)
		// Only what aisan writes is acted on: another tool's file dropped
		// in the registry, or a hand-written one, is skipped with a
		// warning.
		rr.dec.DisallowUnknownFields()
	}
	rr.rest.b = data
	*r = Record{}
	if err := rr.dec.Decode(r); err != nil {
		return err
	}
	// What follows the record must be white space: what the decoder
	// read past it, and what it did not read.
	var b [64]byte
	for buffered := rr.dec.Buffered(); ; {
		n, err := buffered.Read(b[:])
		if !blank(b[:n]) {
			return errTrailing
		}
		if err != nil {
			break
		}
	}
	if !blank(rr.rest.b) {
		return errTrailing
	}
	return nil
}

var errTrailing = errors.New("trailing data after the record")

// blank reports whether b is all white space, as JSON counts it.
func blank(b []byte) bool { return len(bytes.TrimLeft(b, " \t\r\n")) == 0 }

// maxRecord caps what is read of one record: a real record is a few
// hundred bytes, and a huge file must not stall "aisan list".
const maxRecord = 64 << 10

// readFile reads path into *buf with bare system calls: os.ReadFile's
// extra fstat and the runtime poller registration of an *os.File double
// the cost of reading a record, and listing reads a thousand of them.
//
// The registry is read by the user's own aisan, which then acts on it, so
// only a file that can be ours is read: no symlink is followed (O_NOFOLLOW),
// a FIFO or device is never read from (O_NONBLOCK, then a regular-file
// check), and it must belong to the user and be no larger than maxRecord.
// Anything else is a *CorruptError, skipped with a warning.
func readFile(path string, buf *[]byte) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, &CorruptError{Path: path, Err: errors.New("it is a symlink")}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if err := checkOwnRegular(&st, maxRecord); err != nil {
		return nil, &CorruptError{Path: path, Err: err}
	}
	if len(*buf) == 0 {
		*buf = make([]byte, 4096)
	}
	n := 0
	for {
		if n == len(*buf) {
			if n > maxRecord {
				return nil, &CorruptError{Path: path, Err: fmt.Errorf("it is larger than %d bytes", maxRecord)}
			}
			*buf = append(*buf, make([]byte, len(*buf))...)
		}
		m, err := unix.Read(fd, (*buf)[n:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if m == 0 {
			return (*buf)[:n], nil
		}
		n += m
		// A record is replaced by a rename, never written in place: once
		// the size fstat saw is read, the end is there, and the read that
		// would say so is one system call per record saved.
		if int64(n) == st.Size {
			return (*buf)[:n], nil
		}
	}
}

// uid is the user's ID, asked once: listing checks a thousand files.
var uid = sync.OnceValue(os.Getuid)

// checkOwnRegular accepts a regular file of the user's no larger than max.
func checkOwnRegular(st *unix.Stat_t, max int64) error {
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return errors.New("it is not a regular file")
	case int(st.Uid) != uid():
		return fmt.Errorf("it belongs to uid %d, not to you", st.Uid)
	case st.Size > max:
		return fmt.Errorf("it is larger than %d bytes", max)
	}
	return nil
}

// writeRecord replaces path with r atomically: a reader sees the old record
// or the new one. The temporary file's name starts with a dot so that a
// concurrent listing never takes it for a record.
func writeRecord(path string, r Record) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding record for slot %q: %w", r.Slot, err)
	}
	if err := writeFileAtomic(path, append(data, '\n')); err != nil {
		return err
	}
	if !r.End.IsZero() {
		// The record goes with the next launch; what 'aisan logs
		// --launches' shows of this one stays beside its transcript.
		writeLaunchInfo(r)
	}
	return nil
}

// writeFileAtomic replaces a record (see atomicfile), so a reader sees
// the old record or the new one, never a torn one.
//
// There is no fsync: records sit on every launch's critical path (three
// writes, each two syncs, were several milliseconds), and durability buys
// nothing for them. A record describes processes, and the only failure a
// sync guards against, the machine going down, ends every jail too; what
// an aisan process that dies leaves in the page cache stays there. After a
// power loss a record may read as empty or old: list reports one that does
// not parse, and an old one still names a dead holder, so it shows as
// orphaned and its kill proof fails safely.
func writeFileAtomic(path string, data []byte) error {
	return atomicfile.Write(path, data, atomicfile.Options{Mode: 0o600})
}

// Warm builds, beside the caller's other work, what a launch's slot
// builds on its first use in a process: encoding/json's decoder and
// encoder for Record (about 0.8 ms here, most of it the first decode),
// and the local time zone its start time is written in (0.1-0.3 ms,
// reading /etc/localtime). A launch calls it in a goroutine as it
// starts; both are the same whether Warm or the slot gets there first.
func Warm() {
	var r Record
	_ = json.Unmarshal(warmRecord, &r)
	r.Start = time.Now()
	_, _ = json.Marshal(&r)
}

// warmRecord has a value of each kind a record holds.
var warmRecord = []byte(`{"slot": "w", "kind": "run", "worktree": "/", "wrapper_pid": 1, "start": "2026-01-01T00:00:00Z", "end": "2026-01-01T00:00:01Z", "exit_status": 0}`)
