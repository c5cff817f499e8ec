package hostproxy

import (
	"fmt"
	"net/netip"
	"net/url"
)

// NoProxy is the box's NO_PROXY: the model and gRPC relays listen on
// loopback and must stay direct.
const NoProxy = "localhost,127.0.0.1,::1"

// BoxEnv gives the environment that points a box's clients at the in-box
// endpoint of this proxy (an http://127.0.0.1:PORT URL), as sorted
// KEY=VALUE lines. Both spellings are set because clients disagree on
// which they read (curl takes only lowercase http_proxy, for example).
func BoxEnv(endpoint string) ([]string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("host proxy endpoint %q: %w", endpoint, err)
	}
	ap, err := netip.ParseAddrPort(u.Host)
	if u.Scheme != "http" || err != nil || !ap.Addr().IsLoopback() || ap.Port() == 0 ||
		u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("host proxy endpoint %q: want http://127.0.0.1:PORT, a loopback address with its port", endpoint)
	}
	v := "http://" + ap.String()
	return []string{
		"ALL_PROXY=" + v,
		"HTTPS_PROXY=" + v,
		"HTTP_PROXY=" + v,
		"NO_PROXY=" + NoProxy,
		"all_proxy=" + v,
		"http_proxy=" + v,
		"https_proxy=" + v,
		"no_proxy=" + NoProxy,
	}, nil
}
