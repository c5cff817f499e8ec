// Package strictbox is the host side of a strict box: what the launch
// starts and keeps on the host for it (the model, REAPI and host
// allow-list egress services), with the strict-only helpers beneath it:
// git pins (gitpin), the MCP import (mcp) and bind specs (bindspec).
package strictbox
