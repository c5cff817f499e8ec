// Package strictbox is the host side of a strict box, and its mode
// ([Box], a [launch.Mode]).
//
// # A strict launch, from the host
//
//	Box.Prepare   gather (gather.go) reads the repository's git layout
//	              (gitpin) and what host tools run in it (protect), the
//	              agent's binaries, instruction files and
//	              settings, the credentials that exist and the bind specs'
//	              sources; decide, a pure function, turns them and the
//	              user's Options into the strict preset's options; planMCP
//	              (mcpimport.go) reads the user's MCP configs; the model
//	              endpoint and the ports are planned (models.go, request.go)
//	jail.Plan     the preset, compiled (package jail, which reads nothing)
//	Box.Serve     the state directory and its seed (state.go), the MCP
//	              import, the gitconfig, the protected paths' copies
//	              (held), the egress services (egress.go)
//	services      Env for the box's environment file; Keep and Resume
//	              (services.go) hand them to a keeper; Stop ends them and
//	              collects the held set: what the box changed of what host
//	              tools run, held for 'aisan review'
//
// The files that define a box (bind specs, egress files) are read only
// when no box can write where they lie, or the user approved them
// (trust, egresstrust.go).
//
// Which backends exist, how --egress names them, what serves each and
// which agent each serves is one table, egress/backend.Builtin.
//
// Beneath it, the strict side's helpers: gitpin (the repository's git
// metadata, pinned), protect (what host tools run, kept from the box) and
// held (the box's copies of it, held for review), mcp (the user's local
// MCP servers, imported), bindspec (the user's bind spec files) and trust
// (the user's approvals of files a box could have written).
package strictbox
