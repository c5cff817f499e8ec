package preflight

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/aisan-dev/aisan/jail/shared/distro"
)

// usernsResult is what running bwrap once showed.
type usernsResult struct {
	err    error  // nil when bwrap built the namespaces
	output string // bwrap's stderr and stdout
	facts  usernsFacts
}

// usernsFacts is what the classification of a failed bwrap looks at. The
// sysctl fields are the files' contents, "" when the kernel has no such
// knob.
type usernsFacts struct {
	Euid   int
	Bwrap  string
	Setuid bool
	Output string
	// AppArmorRestrict is kernel.apparmor_restrict_unprivileged_userns
	// (Ubuntu 23.10 and later).
	AppArmorRestrict string
	// UnprivClone is kernel.unprivileged_userns_clone (Debian's patch).
	UnprivClone string
	// MaxUserNS is user.max_user_namespaces.
	MaxUserNS string
	// UsrBinBwrap reports whether /usr/bin/bwrap exists, the path the
	// distributions' AppArmor profile names.
	UsrBinBwrap bool
	// Container names the container preflight runs in, "" on a host.
	Container string
	Family    distro.Family
}

// The sysctls that gate unprivileged user namespaces.
const (
	sysctlAppArmor = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"
	sysctlClone    = "/proc/sys/kernel/unprivileged_userns_clone"
	sysctlMax      = "/proc/sys/user/max_user_namespaces"
)

// usernsProbe runs bwrap once with the namespaces and mounts the jail
// needs most (a PID namespace, a fresh /proc): the real thing, not a
// reading of sysctls, which cannot see AppArmor profiles or seccomp.
func (e *Env) usernsProbe(ctx context.Context) usernsResult {
	return e.userns.get(func() usernsResult {
		bw := e.bwrapProbe(ctx)
		if bw.Err != nil {
			return usernsResult{err: bw.Err}
		}
		ctx, cancel := context.WithTimeout(ctx, commandTimeout)
		defer cancel()
		out, err := exec.CommandContext(ctx, bw.Path, "--unshare-pid", "--ro-bind", "/", "/", "--proc", "/proc", "--", trueCommand(e.Self)).CombinedOutput()
		if err == nil {
			return usernsResult{}
		}
		r := usernsResult{err: err, output: string(bytes.TrimSpace(out))}
		r.facts = usernsFacts{
			Euid:             e.Euid,
			Bwrap:            bw.Path,
			Setuid:           bw.Setuid,
			Output:           r.output,
			AppArmorRestrict: readTrim(sysctlAppArmor),
			UnprivClone:      readTrim(sysctlClone),
			MaxUserNS:        readTrim(sysctlMax),
			UsrBinBwrap:      fileExists("/usr/bin/bwrap"),
			Container:        detectContainer(),
			Family:           e.Family,
		}
		return r
	})
}

// trueCommand is a program that exits 0 at once, by absolute path: bwrap
// looks a bare name up in its own PATH, which a test may have emptied.
func trueCommand(self string) string {
	for _, p := range []string{"/usr/bin/true", "/bin/true"} {
		if fileExists(p) {
			return p
		}
	}
	return self
}

func checkUserns(ctx context.Context, e *Env) Finding {
	bw := e.bwrapProbe(ctx)
	if bw.Err != nil {
		return Finding{Status: Fail, Detail: "not tested: bwrap is not installed", Fix: e.install("bwrap")}
	}
	r := e.usernsProbe(ctx)
	if r.err == nil {
		switch {
		case e.Euid == 0:
			return Finding{Detail: "bwrap built a PID namespace (as root, without a user namespace)"}
		case bw.Setuid:
			return Finding{Detail: "bwrap built a PID namespace (bwrap is setuid root)"}
		}
		return Finding{Detail: "bwrap built a user and PID namespace"}
	}
	detail, fix := classifyUserns(r.facts)
	return Finding{Status: Fail, Detail: detail, Fix: fix}
}

// Fix commands for the kernel switches, verbatim. The sysctl.d file keeps
// the setting across reboots.
const (
	fixMaxUserNS = "sudo sysctl -w user.max_user_namespaces=16384 && echo user.max_user_namespaces=16384 | sudo tee /etc/sysctl.d/60-aisan-userns.conf"
	fixClone     = "sudo sysctl -w kernel.unprivileged_userns_clone=1 && echo kernel.unprivileged_userns_clone=1 | sudo tee /etc/sysctl.d/60-aisan-userns.conf"
	// fixAppArmorProfile grants /usr/bin/bwrap the userns permission, as
	// Ubuntu does for the applications it trusts with user namespaces.
	fixAppArmorProfile = `printf 'abi <abi/4.0>,\ninclude <tunables/global>\nprofile bwrap /usr/bin/bwrap flags=(unconfined) {\n  userns,\n}\n' | sudo tee /etc/apparmor.d/bwrap && sudo apparmor_parser -r /etc/apparmor.d/bwrap`
	fixContainer       = "start the container with --security-opt seccomp=unconfined --security-opt apparmor=unconfined (Docker, Podman) or security.nesting=true (LXD, Incus), or run aisan on the host"
)

// classifyUserns names why bwrap could not build the jail's namespaces,
// and the fix, from facts alone. The kernel switches come first: they
// refuse every user namespace, whatever else is true.
func classifyUserns(f usernsFacts) (detail, fix string) {
	// why is bwrap's last line, which names itself ("bwrap: ...").
	why := lastLine(f.Output)
	if why == "" {
		why = "no message"
	}
	if !strings.HasPrefix(why, "bwrap:") {
		why = "bwrap: " + why
	}
	switch {
	case f.MaxUserNS == "0":
		return "user.max_user_namespaces=0: the kernel allows no user namespaces (" + why + ")", fixMaxUserNS
	case f.UnprivClone == "0":
		return "kernel.unprivileged_userns_clone=0: unprivileged user namespaces are disabled (" + why + ")", fixClone
	case f.AppArmorRestrict == "1" && f.Bwrap != "/usr/bin/bwrap":
		detail = fmt.Sprintf("AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1) and %s is not /usr/bin/bwrap, the path the AppArmor profile lets through (%s)", f.Bwrap, why)
		if f.UsrBinBwrap {
			return detail, "export PATH=/usr/bin:$PATH   # use the distribution's /usr/bin/bwrap, or remove " + f.Bwrap
		}
		return detail, distro.InstallCommand(f.Family, "bwrap") + "   # the distribution's bwrap, at /usr/bin/bwrap"
	case f.AppArmorRestrict == "1":
		return "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1) and no AppArmor profile grants /usr/bin/bwrap the userns permission (" + why + ")", fixAppArmorProfile
	case f.Setuid && f.Euid != 0:
		return fmt.Sprintf("%s is setuid root and could not build the jail's namespaces (%s)", f.Bwrap, why),
			"sudo chmod u-s " + f.Bwrap + "   # this kernel allows unprivileged user namespaces; bwrap needs no privileges"
	case f.Container != "":
		return fmt.Sprintf("inside %s that forbids nested user namespaces (%s)", f.Container, why), fixContainer
	}
	return "bwrap could not build the jail's namespaces (" + why + ")",
		"bwrap --unshare-pid --ro-bind / / --proc /proc true   # shows the full error; then look for a security module denial in: sudo dmesg | tail"
}

// detectContainer names the container this process runs in, "" when it
// seems to run on a host. Only a failed probe asks.
func detectContainer() string {
	switch {
	case fileExists("/run/.containerenv"):
		return "a Podman container"
	case fileExists("/.dockerenv"):
		return "a Docker container"
	}
	if b, err := os.ReadFile("/proc/1/environ"); err == nil {
		for _, kv := range strings.Split(string(b), "\x00") {
			if v, ok := strings.CutPrefix(kv, "container="); ok && v != "" {
				return "a " + v + " container"
			}
		}
	}
	// A uid map other than the identity means we already are in a user
	// namespace: an unprivileged container.
	if b, err := os.ReadFile("/proc/self/uid_map"); err == nil {
		if f := strings.Fields(string(b)); len(f) != 3 || f[0] != "0" || f[1] != "0" || f[2] != "4294967295" {
			return "an unprivileged container (a user namespace)"
		}
	}
	return ""
}

func readTrim(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
