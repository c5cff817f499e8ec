package busproxy_test

import (
	"fmt"

	"github.com/aisan-dev/aisan/jail/busproxy"
)

// A launcher decides from its environment and the host facts, prints the
// plan in explain, and uses its mounts and address for the jail.
func ExampleDecide() {
	env := map[string]string{
		"DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus",
		"XDG_RUNTIME_DIR":          "/run/user/1000",
		"AISAN_BUS_TALK":           "org.freedesktop.Notifications org.freedesktop.portal.*",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	facts := busproxy.HostFacts{
		ProxyPath: "/usr/bin/xdg-dbus-proxy",
		SlotDir:   "/run/user/1000/aisan/3f9c2a1b",
		Sockets:   []string{"/run/user/1000/bus"},
	}
	plan, err := busproxy.Decide(lookup, facts)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(plan)
	fmt.Println(busproxy.Argv(plan))
	fmt.Println(plan.Mounts())
	fmt.Println(plan.JailAddress)
	// Output:
	// filtered (talk: org.freedesktop.Notifications org.freedesktop.portal.*)
	// [/usr/bin/xdg-dbus-proxy --fd=3 unix:path=/run/user/1000/bus /run/user/1000/aisan/3f9c2a1b/bus --filter --talk=org.freedesktop.Notifications --talk=org.freedesktop.portal.*]
	// [{/run/user/1000/aisan/3f9c2a1b/bus /run/user/1000/bus}]
	// unix:path=/run/user/1000/bus
}
