package control

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Peer is what the kernel says of the process at the other end of a
// connection: its user, and the PID namespace it runs in (0 when the
// kernel could not name the process in ours).
type Peer struct {
	UID   int
	PID   int
	PIDNS uint64
}

// ErrPeer is wrapped by every refusal of [Judge].
var ErrPeer = errors.New("control peer refused")

// Judge is the whole rule for who may steer a box, without I/O: the
// box's user, from the server's own PID namespace.
func Judge(p Peer, uid int, pidns uint64) error {
	switch {
	case p.UID != uid:
		return fmt.Errorf("%w: uid %d is not the box's user", ErrPeer, p.UID)
	case p.PID <= 0 || p.PIDNS == 0:
		return fmt.Errorf("%w: a process outside this PID namespace", ErrPeer)
	case p.PIDNS != pidns:
		return fmt.Errorf("%w: pid %d runs in another PID namespace (inside a jail or a box)", ErrPeer, p.PID)
	}
	return nil
}

// soPeerPidfd is SO_PEERPIDFD (Linux 6.5): a pidfd of the peer as it
// connected.
const soPeerPidfd = 77

// ReadPeer asks the kernel who is at the other end of c. The peer's
// namespace is read through its PID and then the peer is checked to be
// alive through a pidfd taken first, so that the PID cannot have passed
// to another process in between.
func ReadPeer(c *net.UnixConn) (Peer, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Peer{}, err
	}
	var cred *unix.Ucred
	var credErr error
	pidfd := -1
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		if v, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, soPeerPidfd); err == nil {
			pidfd = v
		}
	}); err != nil {
		return Peer{}, err
	}
	if credErr != nil {
		return Peer{}, fmt.Errorf("reading the peer's credentials: %w", credErr)
	}
	p := Peer{UID: int(cred.Uid), PID: int(cred.Pid)}
	if p.PID <= 0 {
		return p, nil
	}
	if pidfd < 0 {
		// Kernels before 6.5: a pidfd now, which names the PID's holder
		// from here on.
		if pidfd, err = unix.PidfdOpen(p.PID, 0); err != nil {
			return p, nil
		}
	}
	defer unix.Close(pidfd)
	ns, err := pidNS(strconv.Itoa(p.PID))
	if err != nil {
		return p, nil
	}
	if exited(pidfd) {
		return p, nil // whatever holds the PID now is not the peer
	}
	p.PIDNS = ns
	return p, nil
}

// OwnPIDNS is this process's PID namespace.
func OwnPIDNS() (uint64, error) { return pidNS("self") }

func pidNS(pid string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/"+pid+"/ns/pid", &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// exited reports whether the process behind pidfd has ended.
func exited(pidfd int) bool {
	pfd := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	n, err := unix.Poll(pfd, 0)
	return err != nil || n > 0
}

// CheckPeer judges the peer of c (see [Judge]) against this process.
func CheckPeer(c *net.UnixConn) error {
	p, err := ReadPeer(c)
	if err != nil {
		return err
	}
	ns, err := OwnPIDNS()
	if err != nil {
		return err
	}
	return Judge(p, os.Getuid(), ns)
}
