package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// execWithoutRunUser is the helper that runs args as a user with no
// runtime directory (a plain su, cron, a container): /run/user is made
// an empty directory, then the capability that allowed it is given up
// and args run as the user with XDG_RUNTIME_DIR unset. It is started by
// [withoutRunUser], in a user namespace that maps only the user.
func execWithoutRunUser(args []string) int {
	if err := unix.Mount("tmpfs", "/run/user", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		fmt.Fprintln(os.Stderr, "hiding /run/user:", err)
		return 98
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 98
	}
	for _, k := range []string{"AISAN_TEST_HELPER", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS"} {
		os.Unsetenv(k)
	}
	path, err := exec.LookPath(args[0])
	if err == nil {
		err = syscall.Exec(path, args, os.Environ())
	}
	fmt.Fprintln(os.Stderr, err)
	return 98
}

// withoutRunUser is a command running aisan with args in dir, env added,
// as this user without a runtime directory: there is no /run/user/UID
// and no XDG_RUNTIME_DIR. The user is the same and so are the files;
// only /run/user is hidden, in a mount namespace of the command's own.
func withoutRunUser(ctx context.Context, dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, self(), append([]string{aisanBin}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), env...), "AISAN_NO_SCOPE=1", "AISAN_TEST_HELPER=no-run-user")
	uid, gid := os.Getuid(), os.Getgid()
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		GidMappingsEnableSetgroups: false,
		AmbientCaps:                []uintptr{unix.CAP_SYS_ADMIN},
	}
	isolate(cmd)
	return cmd
}

// runWithoutRunUser runs aisan with args as [withoutRunUser], for at
// most limit.
func runWithoutRunUser(t *testing.T, limit time.Duration, dir string, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := withoutRunUser(ctx, dir, env, args...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	r := result{stdout: so.String(), stderr: se.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("aisan %s: %v", strings.Join(args, " "), err)
	}
	if ctx.Err() != nil {
		r.code = -1
	}
	return r
}

// TestLocksWithoutRuntimeDir: without a runtime directory (a plain su,
// cron, a container) aisan's locks are still out of every jail's reach.
// A jail that is root of a user namespace of its own opens every lock
// file it can find in the state dir read-only and holds it: an ended
// slot's name still goes to the next launch in its worktree, and 'aisan
// review' (under the held store's lock) does not wait.
func TestLocksWithoutRuntimeDir(t *testing.T) {
	requireSlots(t)
	home, env := testEnv(t)
	state := filepath.Join(home, ".aisan")
	wt := slotWorktree(t)
	other := filepath.Join(t.TempDir(), "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { runWithoutRunUser(t, time.Minute, "", env, "kill", "--all", "--signal", "KILL") })
	if r := runWithoutRunUser(t, time.Minute, wt, env, "run", "--", "true"); r.code != 0 {
		if strings.Contains(r.stderr, "hiding /run/user") {
			need(t, "a user namespace that can hide /run/user", fmt.Errorf("%s", r.stderr))
		}
		t.Fatalf("launch without a runtime dir: code %d, stderr %q", r.code, r.stderr)
	}
	// The held store's lock, taken by every review.
	if r := runWithoutRunUser(t, time.Minute, "", env, "review"); r.code != 0 {
		t.Fatalf("aisan review: code %d, stderr %q", r.code, r.stderr)
	}
	list := func() []slotEntry {
		r := runWithoutRunUser(t, time.Minute, "", env, "list", "--json")
		var es []slotEntry
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &es) != nil {
			t.Fatalf("aisan list --json: code %d, %q %q", r.code, r.stdout, r.stderr)
		}
		return es
	}
	first := list()
	if len(first) != 1 || first[0].State != "exited" {
		t.Fatalf("after one launch: %+v", first)
	}
	name := first[0].Slot

	// Every lock file in the state dir, taken from inside a jail.
	const attack = `for f in $(find "$AISAN_HOME" -name '*.lock' -type f 2>/dev/null); do
  unshare -r sh -c 'exec 3<"$1" && flock -n 3 && echo "held $1" && exec sleep 300' sh "$f" &
done
sleep 1; echo tried; wait`
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	jail := withoutRunUser(ctx, other, env, "run", "--", "sh", "-c", attack)
	out := &syncBuffer{}
	jail.Stdout, jail.Stderr = out, out
	if err := jail.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { jail.Process.Kill(); jail.Wait() })
	waitFor(t, 30*time.Second, "the jail's attack", func() bool { return strings.Contains(out.String(), "tried") })
	t.Logf("inside the jail: %s", out.String())

	// The host's next steps.
	if r := runWithoutRunUser(t, time.Minute, wt, env, "run", "--", "true"); r.code != 0 {
		t.Fatalf("next launch: code %d, stderr %q", r.code, r.stderr)
	}
	for _, e := range list() {
		if e.Slot == name+"-2" {
			t.Errorf("the next launch in %s got %s: a jail held %s's lock", wt, e.Slot, name)
		}
	}
	if r := runWithoutRunUser(t, 15*time.Second, "", env, "review"); r.code != 0 {
		t.Errorf("aisan review with a jail running: code %d (-1: still waiting after 15s), stderr %q", r.code, r.stderr)
	}
	// No lock is where a jail sees the state dir: only in aisan's run
	// directory there, which every jail gets empty.
	filepath.WalkDir(state, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p == filepath.Join(state, "run") {
			return filepath.SkipDir
		}
		if err == nil && strings.HasSuffix(p, ".lock") {
			t.Errorf("a lock file in the state dir, outside its run directory: %s", p)
		}
		return nil
	})
}
