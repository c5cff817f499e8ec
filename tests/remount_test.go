package tests

import (
	"os/exec"
	"strings"
	"testing"
)

// remountScript runs as root of a user and mount namespace of the test's
// own ($1 is aisan). A shared tmpfs stands for /run and a tmpfs in it for
// the user's runtime directory, with a user manager's private socket. A
// deny-list jail and, as the control, an ordinary slave mount namespace
// start and wait; the runtime directory is then unmounted and a fresh one
// mounted, as when the user's last session ends and a new login begins,
// with a new manager's socket in it. Each says what it sees afterwards.
const remountScript = `set -eu
d=$(mktemp -d)
mount -t tmpfs tmpfs "$d"
mount --make-shared "$d"
mkdir "$d/u"
mount -t tmpfs -o mode=700 tmpfs "$d/u"
mkdir "$d/u/systemd"
echo old >"$d/u/generation"
: >"$d/u/systemd/private"
export XDG_RUNTIME_DIR="$d/u" AISAN_NO_SCOPE=1 AISAN_NO_BUS_PROXY=1
unset DBUS_SESSION_BUS_ADDRESS
look='touch "$D/ready-$WHO"; n=0
while [ ! -e "$D/remounted" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n+1)); done
echo "$WHO: $(cat "$D/u/generation") [$(ls "$D/u/systemd" | tr "\n" " ")]"'
export D="$d" look
WHO=jail "$1" run -- sh -c "$look" &
WHO=slave unshare -m --propagation slave sh -c "$look" &
n=0
while { [ ! -e "$d/ready-jail" ] || [ ! -e "$d/ready-slave" ]; } && [ $n -lt 200 ]; do sleep 0.05; n=$((n+1)); done
umount -l "$d/u"
mount -t tmpfs -o mode=700 tmpfs "$d/u"
mkdir "$d/u/systemd"
echo new >"$d/u/generation"
: >"$d/u/systemd/private"
touch "$d/remounted"
wait`

// TestRuntimeDirRemount: a jail outlives the runtime directory it was
// launched with (the user logs out and in again while it runs). The
// control, a slave mount namespace, sees the fresh directory and the new
// manager's private socket, which proves the remount propagates to an
// ordinary namespace. The jail keeps the directory it started with, its
// masks still in place: the new socket never reaches it.
func TestRuntimeDirRemount(t *testing.T) {
	requireJail(t)
	requireSlots(t)
	_, err := exec.LookPath("unshare")
	need(t, "unshare (apt-get install util-linux)", err)
	_, env := testEnv(t)
	r := runCmd(t, "", env, "", "unshare", "-Urm", "--propagation", "unchanged", "sh", "-c", remountScript, "sh", aisanBin)
	if r.code != 0 {
		t.Fatalf("remount script: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if who, what, ok := strings.Cut(l, ": "); ok {
			got[who] = what
		}
	}
	if want := "new [private ]"; got["slave"] != want {
		t.Fatalf("the control namespace saw %q after the remount, want %q: the test's remount did not propagate\nstdout: %s\nstderr: %s", got["slave"], want, r.stdout, r.stderr)
	}
	if want := "old []"; got["jail"] != want {
		t.Errorf("the jail saw %q after the remount, want %q (the runtime directory it started with, systemd/ masked)\nstdout: %s\nstderr: %s", got["jail"], want, r.stdout, r.stderr)
	}
}
