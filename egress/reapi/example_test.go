package reapi_test

import (
	"fmt"

	"github.com/aisan-dev/aisan/egress/reapi"
)

func ExampleParse() {
	cfg, err := reapi.Parse("reapi", false, "reapi.toml", []byte(`
upstream      = "remotebuildexecution.googleapis.com:443"
instance      = "projects/p/instances/default_instance"
token_command = "luci-auth token -scopes-cloud"
headers       = ["x-goog-request-params"]
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range cfg.Methods {
		fmt.Println(m)
	}
	// Output:
	// /build.bazel.remote.execution.v2.ActionCache/GetActionResult
	// /build.bazel.remote.execution.v2.Capabilities/GetCapabilities
	// /build.bazel.remote.execution.v2.ContentAddressableStorage/BatchReadBlobs
	// /build.bazel.remote.execution.v2.ContentAddressableStorage/BatchUpdateBlobs
	// /build.bazel.remote.execution.v2.ContentAddressableStorage/FindMissingBlobs
	// /build.bazel.remote.execution.v2.ContentAddressableStorage/GetTree
	// /build.bazel.remote.execution.v2.Execution/Execute
	// /build.bazel.remote.execution.v2.Execution/WaitExecution
	// /google.bytestream.ByteStream/Read
	// /google.bytestream.ByteStream/Write
	// /google.longrunning.Operations/GetOperation
	// /google.longrunning.Operations/WaitOperation
}

func ExampleParse_unknownKey() {
	_, err := reapi.Parse("reapi", false, "reapi.toml", []byte(`
upstream = "remotebuildexecution.googleapis.com:443"
instance = "projects/p/instances/default_instance"
token_file = "/run/user/1000/rbe-token"
method = ["/build.bazel.remote.execution.v2.Execution/Execute"]
`))
	fmt.Println(err)
	// Output:
	// reapi.toml:5:1: unknown key "method" (known keys: upstream, instance, token_command, token_file, methods, headers, operations, max_first_message, [[rule]] method/field/match)
}
