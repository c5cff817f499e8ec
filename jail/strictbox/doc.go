// Package strictbox is the host side of a strict box, and its mode
// ([Box], a [launch.Mode]).
//
// # A strict launch, from the host
//
//	Box.Prepare   gather (gather.go) reads the repository's git layout
//	              (gitpin), the agent's binaries, instruction files and
//	              settings, the credentials that exist and the bind specs'
//	              sources; decide, a pure function, turns them and the
//	              user's Options into the strict preset's options; planMCP
//	              (mcpimport.go) reads the user's MCP configs; the model
//	              endpoint and the ports are planned (models.go, request.go)
//	jail.Plan     the preset, compiled (package jail, which reads nothing)
//	Box.Serve     the state directory and its seed (state.go), the MCP
//	              import, the gitconfig, the egress services (egress.go)
//	services      Env for the box's environment file; Keep and Resume
//	              (services.go) hand them to a keeper; Stop ends them and
//	              sweeps what the box left that would redirect host git
//
// Which backends exist, how --egress names them, what serves each and
// which agent each serves is one table, egress/backend.Builtin.
//
// Beneath it: gitpin (the repository's git metadata, pinned), mcp (the
// user's local MCP servers, imported) and bindspec (the user's bind spec
// files).
package strictbox
