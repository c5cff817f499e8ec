#!/usr/bin/env bash
# A real `systemd --user` manager and session bus for the test user, on hosts
# where PID 1 is not systemd (our CI machines). Run as root.
#
# How: a private mount namespace in which /run/systemd/system exists (what
# sd_booted() looks for), /sys/fs/cgroup is a pure cgroup2 mount, and
# /run/user/UID is a tmpfs owned by the user. A cgroup subtree is chowned to
# the user (logind's job on a real host), the namespace's first process moves
# into user@UID.service and execs the distro's systemd --user as the user.
# dbus-user-session socket-activates the session bus there.
#
#   usermgr.sh start            start it (idempotent)
#   usermgr.sh exec CMD...      run CMD as the user inside, in a "session" cgroup
#   usermgr.sh stop             stop it and remove its cgroups
set -euo pipefail

TUSER=${AISAN_TEST_USER:-aisan-test}
STATE=${AISAN_USERMGR_STATE:-/run/aisan-usermgr}
TUID=$(id -u "$TUSER")
TGID=$(id -g "$TUSER")
THOME=$(getent passwd "$TUSER" | cut -d: -f6)
RT=/run/user/$TUID
UNIT=user.slice/user-$TUID.slice/user@$TUID.service
SESS=user.slice/user-$TUID.slice/session-aisan.scope

cgroup2_root() {
	if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
		echo /sys/fs/cgroup
	elif [ "$(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then
		echo /sys/fs/cgroup/unified
	else
		echo "usermgr: no cgroup2 hierarchy mounted on this host" >&2
		return 1
	fi
}

manager_pid() {
	[ -f "$STATE/outer.pid" ] || return 1
	pgrep -P "$(cat "$STATE/outer.pid")" | head -n1
}

running() {
	local p
	p=$(manager_pid 2>/dev/null) || return 1
	[ -n "$p" ] && [ -S "/proc/$p/root$RT/bus" ]
}

start() {
	if running; then return 0; fi
	command -v /lib/systemd/systemd >/dev/null || { echo "usermgr: /lib/systemd/systemd missing (apt-get install systemd)" >&2; return 1; }
	mkdir -p "$STATE" "$RT"
	local cg
	cg=$(cgroup2_root)
	mkdir -p "$cg/$UNIT" "$cg/$SESS"
	chown -R "$TUID:$TGID" "$cg/$UNIT" "$cg/$SESS"
	# Moving its own processes between the two leaves needs write access to
	# their common parent's cgroup.procs.
	chown "$TUID:$TGID" "$cg/user.slice/user-$TUID.slice" "$cg/user.slice/user-$TUID.slice/cgroup.procs"
	unshare --mount --propagation private --fork -- bash -c '
		set -e
		mount -t tmpfs -o mode=755 tmpfs /run/systemd
		mkdir -p /run/systemd/system
		mount -t tmpfs -o mode=700,uid='"$TUID"',gid='"$TGID"',size=64m tmpfs '"$RT"'
		mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup 2>/dev/null || mount -t cgroup2 cgroup2 /sys/fs/cgroup
		echo $$ > /sys/fs/cgroup/'"$UNIT"'/cgroup.procs
		cd /
		exec setpriv --reuid='"$TUID"' --regid='"$TGID"' --init-groups --reset-env \
			env HOME='"$THOME"' USER='"$TUSER"' LOGNAME='"$TUSER"' XDG_RUNTIME_DIR='"$RT"' \
			PATH=/usr/local/bin:/usr/bin:/bin /lib/systemd/systemd --user --log-target=console
	' >"$STATE/manager.log" 2>&1 &
	echo $! >"$STATE/outer.pid"
	for _ in $(seq 150); do
		if running && [ -S "/proc/$(manager_pid)/root$RT/systemd/private" ]; then
			return 0
		fi
		sleep 0.1
	done
	echo "usermgr: the user manager did not come up; its log:" >&2
	cat "$STATE/manager.log" >&2
	return 1
}

run_inside() {
	local p
	p=$(manager_pid) || { echo "usermgr: not running (usermgr.sh start)" >&2; return 1; }
	# nsenter's --wd would resolve the directory in our mount namespace,
	# leaving a cwd that getcwd(2) cannot name inside; cd once inside.
	nsenter -t "$p" -m -- sh -c 'cd "$1" && shift && echo $$ > /sys/fs/cgroup/'"$SESS"'/cgroup.procs && exec "$@"' sh "$PWD" \
		setpriv --reuid="$TUID" --regid="$TGID" --init-groups --reset-env \
		env HOME="$THOME" USER="$TUSER" LOGNAME="$TUSER" SHELL=/bin/bash \
		XDG_RUNTIME_DIR="$RT" DBUS_SESSION_BUS_ADDRESS="unix:path=$RT/bus" \
		PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/go/bin \
		LANG=C.UTF-8 "$@"
}

stop() {
	[ -f "$STATE/outer.pid" ] || return 0
	local p
	p=$(manager_pid 2>/dev/null || true)
	if [ -n "$p" ]; then
		kill -TERM "$p" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null || true
	fi
	kill "$(cat "$STATE/outer.pid")" 2>/dev/null || true
	local cg
	cg=$(cgroup2_root) || true
	if [ -n "$cg" ] && [ -d "$cg/user.slice" ]; then
		find "$cg/user.slice" -depth -type d -exec rmdir {} \; 2>/dev/null || true
	fi
	rm -rf "$STATE"
}

case "${1:-}" in
start) start ;;
stop) stop ;;
exec) shift; run_inside "$@" ;;
*) echo "usage: usermgr.sh start|exec CMD...|stop" >&2; exit 2 ;;
esac
