package hostproxy_test

import (
	"fmt"

	"github.com/aisan-dev/aisan/egress/hostproxy"
)

func ExampleParseList() {
	l, err := hostproxy.ParseList([]string{"GitHub.com.", "*.githubusercontent.com", "devbox.internal:8080"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(l.Strings())
	_, err = hostproxy.ParseList([]string{"*.com"})
	fmt.Println(err)
	// Output:
	// [github.com *.githubusercontent.com devbox.internal:8080]
	// bad --allow-host pattern "*.com": *.com would match a whole top-level domain; name a domain with two labels at least
}

func ExampleBoxEnv() {
	env, _ := hostproxy.BoxEnv("http://127.0.0.1:8717")
	for _, kv := range env {
		fmt.Println(kv)
	}
	// Output:
	// ALL_PROXY=http://127.0.0.1:8717
	// HTTPS_PROXY=http://127.0.0.1:8717
	// HTTP_PROXY=http://127.0.0.1:8717
	// NO_PROXY=localhost,127.0.0.1,::1
	// all_proxy=http://127.0.0.1:8717
	// http_proxy=http://127.0.0.1:8717
	// https_proxy=http://127.0.0.1:8717
	// no_proxy=localhost,127.0.0.1,::1
}
