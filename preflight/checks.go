package preflight

// Checks returns the checks preflight runs, in the order it prints them:
// dependencies, user namespaces, the four denials and the transparency
// promises proven live in one probe jail, then hazards.
func Checks() []Check {
	return []Check{
		// Dependencies.
		{"bwrap", checkBwrap},
		{"xdg-dbus-proxy", checkProxy},
		{"user manager", checkUserManager},
		{"git", checkGit},
		// bwrap, once, for real.
		{"user namespaces", checkUserns},
		// The four denials, from inside a real jail.
		{leadLive, leadLiveCheck(decidePID)},
		{"cgroup writes", liveCheck(decideCgroup)},
		{"systemd on bus", liveCheck(decideSystemdBus)},
		{"systemd socket", liveCheck(decidePrivate)},
		// Nor another terminal: no host pty by its path.
		{"other terminals", liveCheck(decideTerminals)},
		// Transparency, from inside the same jail.
		{"home and /tmp", liveCheck(decideDirs)},
		{"agent sockets", liveCheck(decideSockets)},
		{"session bus", liveCheck(decideSessionBus)},
		// Hazards.
		{"bus address", checkBusAddress},
		{"state dir", checkStateDir},
		{"guard hook", checkGuardHook},
		{"watch unit", checkWatchUnit},
		{"shell", checkShell},
		{"limits", checkLimits},
		{"root", checkRoot},
	}
}
