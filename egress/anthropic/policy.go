package anthropic

import (
	"sync"

	"github.com/aisan-dev/aisan/egress/policy"
)

// The Messages API body policy, as the Claude CLI 2.1.332 uses the API
// (the rows were seeded from the bodies it sends in the end-to-end tests,
// egress/policy/testdata/messages, and from its own request builder).
// Everything the provider would do outside the box is refused by name:
// sources it would fetch or take from its Files API, tools it runs,
// connectors, containers, conversations it stores; anything else it does
// not list is refused as unknown.

// Why a row refuses, shared by the rows that refuse for one reason.
const (
	whyURL       = "Anthropic's servers would fetch the URL; attach the data itself (base64) instead"
	whyFile      = "it names a file in Anthropic's Files API, which strict mode does not use; attach the data itself"
	whyServer    = "it runs on Anthropic's servers, which reach the network for the box"
	whyReplay    = "it replays a tool that ran on Anthropic's servers; strict mode runs no tools there"
	whyMCP       = "it makes Anthropic's servers connect to MCP servers; the box's own MCP servers need no such field"
	whyContainer = "it runs code in a container on Anthropic's servers"
	whyThread    = "it continues a conversation stored on Anthropic's servers, which strict mode does not use"
)

// Betas are the anthropic-beta values the Claude CLI 2.1.332 knows (its
// own list of betas, and those it names elsewhere): a beta switches a
// feature on for the call, and the features these switch on either read
// only what the body rows allow or need a field, tag or tool the rows
// refuse. A beta aisan does not know may switch on something the rows
// would let through unread, so it is refused.
var Betas = []string{
	"advanced-tool-use-2025-11-20",
	"advisor-tool-2026-03-01",
	"afk-mode-2026-01-31",
	"agent-memory-2026-07-22",
	"auto-mode-classifier-2026-07-16",
	"cache-diagnosis-2026-04-07",
	"cache-keepalive-2026-09-03",
	"ccr-byoc-2025-07-29",
	"ccr-triggers-2026-01-30",
	"claude-code-20250219",
	"claude-code-side-query-2026-09-29",
	"context-1m-2025-08-07",
	"context-hint-2026-04-09",
	"context-management-2025-06-27",
	"dangerous-tool-use-2026-09-03",
	"dreaming-2026-04-21",
	"effort-2025-11-24",
	"environments-2025-11-01",
	"extended-cache-ttl-2025-04-11",
	"fallback-credit-2026-06-01",
	"fast-mode-2026-02-01",
	"files-api-2025-04-14",
	"inline-tools-2026-09-15",
	"interleaved-thinking-2025-05-14",
	"managed-agents-2026-04-01",
	"mcp-servers-2025-12-04",
	"mcp-tunnels-2026-06-22",
	"message-batches-2024-09-24",
	"message-threads-2026-08-12",
	"mid-conversation-system-2026-04-07",
	"mid-conversation-system-clear-at-2026-08-21",
	"mid-conversation-tool-changes-2026-07-01",
	"oauth-2025-04-20",
	"oidc-federation-2026-04-01",
	"per-turn-control-2026-07-01",
	"program-use-case-ids-2026-09-17",
	"prompt-caching-evict-2026-05-12",
	"prompt-caching-scope-2026-01-05",
	"redact-thinking-2026-02-12",
	"request-tags-2026-08-21",
	"resumption-2026-10-08",
	"server-side-fallback-2026-06-01",
	"server-side-fallback-2026-07-01",
	"structured-outputs-2025-12-15",
	"subagent-review-2026-11-17",
	"task-budgets-2026-03-13",
	"thinking-binding-controls-2026-08-01",
	"thinking-display-updates-2026-08-18",
	"thinking-resumption-2026-07-17",
	"thinking-token-count-2026-05-13",
	"timing-2026-09-09",
	"token-counting-2024-11-01",
	"tool-provenance-2026-10-26",
	"tool-search-tool-2025-10-19",
	"user-profiles-2026-08-18",
	"web-search-2025-03-05",
	"web-search-results-only-2026-11-15",
	"x-cc-internal-mid-conv-cache-promotion",
	"x-cc-internal-mid-conv-cache-promotion-ok",
	"x-cc-internal-tool-provenance-server-url",
}

// Versions are the anthropic-version values the Claude CLI 2.1.332 sends
// (its SDK pins one): the version selects the API's behaviour for the
// call, so another is refused. Vertex AI takes the version in the body
// (anthropic_version) and its backend does not forward the header.
var Versions = []string{"2023-06-01"}

// headers are the listed request headers of the Messages table. The other
// headers the backend forwards hold no switch and stay unchecked: x-app,
// x-claude-code-session-id, x-client-request-id and user-agent name the
// client and its session, and the SDKHeaders describe the SDK, its
// runtime, its retry count and timeout (free-form metadata the API does
// not act on).
func headers(vertex bool) []policy.HeaderList {
	h := []policy.HeaderList{{Name: "anthropic-beta", Values: Betas, Note: "the betas the Claude CLI knows"}}
	if vertex {
		return h
	}
	return append(h,
		policy.HeaderList{Name: "anthropic-version", Values: Versions, Note: "the API version the Claude CLI sends"},
		policy.HeaderList{Name: "anthropic-dangerous-direct-browser-access", Values: []string{"true"}, Note: "what the Claude CLI's SDK sends"},
	)
}

var (
	messagesOnce = sync.OnceValue(func() *policy.Table { return messagesTable("Anthropic Messages and count_tokens", false) })
	vertexOnce   = sync.OnceValue(func() *policy.Table { return messagesTable("Anthropic Messages on Vertex AI", true) })
)

// Policy is the body policy of /v1/messages and /v1/messages/count_tokens.
func Policy() *policy.Table { return messagesOnce() }

// VertexPolicy is the same for Vertex AI's rawPredict and
// streamRawPredict, whose bodies carry anthropic_version (and the model
// only for count-tokens; it is in the path otherwise).
func VertexPolicy() *policy.Table { return vertexOnce() }

func messagesTable(name string, vertex bool) *policy.Table {
	P := policy.Fields
	str, num, boolean, anyJSON := policy.Str, policy.Num, policy.Bool, policy.Any
	obj, list, or := policy.Obj, policy.List, policy.Or
	cache := obj("cache control")

	body := P(
		"model", str,
		"messages", list(obj("message")),
		"system", or(str, list(obj("system block"))),
		"max_tokens", num,
		"metadata", obj("metadata"),
		"stream", boolean,
		"stop_sequences", list(str),
		"temperature", num,
		"top_p", num,
		"top_k", num,
		"tools", list(obj("tool")),
		"tool_choice", obj("tool choice"),
		"thinking", obj("thinking"),
		"context_management", obj("context management"),
		"output_config", obj("output config"),
		"service_tier", policy.Enum("auto", "standard_only"),
		"speed", str,
		"fallbacks", list(obj("fallback")),
		"fallback_credit_token", str,
		"diagnostics", obj("diagnostics"),
		"safeguards", list(obj("safeguard")),
	)
	body = append(body,
		policy.Field{Name: "mcp_servers", Refused: whyMCP},
		policy.Field{Name: "container", Refused: whyContainer},
		policy.Field{Name: "thread", Refused: whyThread},
	)
	if vertex {
		body = append(body, policy.Field{Name: "anthropic_version", Type: policy.Enum("vertex-2023-10-16")})
	}

	t := &policy.Table{
		Name:    name,
		Root:    "body",
		Headers: headers(vertex),
		Shapes: []policy.Shape{
			{Name: "body", Fields: body},
			{Name: "message", Fields: P(
				"role", policy.Enum("user", "assistant", "system"),
				"content", or(str, list(obj("content block"))),
				"output_config", obj("output config"),
			), Note: "system turns carry the CLI's mid-conversation context and tool changes"},
			{Name: "metadata", Fields: P("user_id", str)},
			{Name: "cache control", Fields: P("type", policy.Enum("ephemeral"), "ttl", policy.Enum("5m", "1h"))},
			{Name: "output config", Fields: P("effort", str, "format", obj("output format"))},
			{Name: "json schema format", Fields: P("type", policy.Enum("json_schema"), "schema", anyJSON)},
			{Name: "fallback", Fields: P("model", str, "output_config", obj("output config"))},
			{Name: "diagnostics", Fields: P("previous_message_id", or(str, policy.Null))},
			{Name: "safeguard", Fields: P("type", policy.Enum("dangerous_tool_use"), "classifier_context", anyJSON, "claude_md", str),
				Note: "context for the provider's check of the model's tool calls (auto mode)"},

			// Tools: the client runs every tool it offers; a tool Anthropic
			// would run is refused by its type.
			{Name: "custom tool", Fields: P(
				"type", policy.Enum("custom"),
				"name", str,
				"description", str,
				"input_schema", anyJSON,
				"cache_control", cache,
				"strict", boolean,
				"defer_loading", boolean,
				"eager_input_streaming", boolean,
				"input_examples", list(anyJSON),
			), Note: "run by the client"},
			{Name: "auto choice", Fields: P("type", policy.Enum("auto"), "disable_parallel_tool_use", boolean)},
			{Name: "any choice", Fields: P("type", policy.Enum("any"), "disable_parallel_tool_use", boolean)},
			{Name: "named choice", Fields: P("type", policy.Enum("tool"), "name", str, "disable_parallel_tool_use", boolean)},
			{Name: "no choice", Fields: P("type", policy.Enum("none"))},
			{Name: "enabled thinking", Fields: P("type", policy.Enum("enabled"), "budget_tokens", num, "display", str)},
			{Name: "adaptive thinking", Fields: P("type", policy.Enum("adaptive"), "display", str)},
			{Name: "disabled thinking", Fields: P("type", policy.Enum("disabled"))},
			{Name: "context management", Fields: P("edits", list(obj("context edit")))},
			{Name: "clear tool uses", Fields: P(
				"type", policy.Enum("clear_tool_uses_20250919"),
				"trigger", obj("edit amount"),
				"keep", obj("edit amount"),
				"clear_at_least", obj("edit amount"),
				"exclude_tools", list(str),
				"clear_tool_inputs", or(boolean, list(str)),
			)},
			{Name: "clear thinking", Fields: P("type", policy.Enum("clear_thinking_20251015"), "keep", or(policy.Enum("all"), obj("edit amount")))},
			{Name: "edit amount", Fields: P("type", policy.Enum("input_tokens", "tool_uses", "thinking_turns"), "value", num)},

			// Content.
			{Name: "text block", Fields: P(
				"type", policy.Enum("text"),
				"text", str,
				"cache_control", cache,
				"citations", or(policy.Null, list(obj("citation"))),
			)},
			{Name: "image block", Fields: P("type", policy.Enum("image"), "source", obj("image source"), "cache_control", cache)},
			{Name: "document block", Fields: P(
				"type", policy.Enum("document"),
				"source", obj("document source"),
				"title", or(str, policy.Null),
				"context", or(str, policy.Null),
				"citations", obj("citations switch"),
				"cache_control", cache,
			)},
			{Name: "search result block", Fields: P(
				"type", policy.Enum("search_result"),
				"source", str,
				"title", str,
				"content", list(obj("text block")),
				"citations", obj("citations switch"),
				"cache_control", cache,
			), Note: "source is a label for citations; nothing fetches it"},
			{Name: "thinking block", Fields: P("type", policy.Enum("thinking"), "thinking", str, "signature", str)},
			{Name: "redacted thinking block", Fields: P("type", policy.Enum("redacted_thinking"), "data", str)},
			{Name: "tool use block", Fields: P(
				"type", policy.Enum("tool_use"),
				"id", str,
				"name", str,
				"input", anyJSON,
				"cache_control", cache,
			)},
			{Name: "tool result block", Fields: P(
				"type", policy.Enum("tool_result"),
				"tool_use_id", str,
				"content", or(str, list(obj("tool result content"))),
				"is_error", boolean,
				"cache_control", cache,
			)},
			{Name: "tool reference", Fields: P("type", policy.Enum("tool_reference"), "tool_name", str, "cache_control", cache),
				Note: "the client's tool search naming a tool it deferred"},
			{Name: "tool change", Fields: P("type", policy.Enum("tool_addition", "tool_removal"), "tool", obj("changed tool"))},
			{Name: "tool definition", Fields: P("type", policy.Enum("tool_definition"), "definition", obj("tool"))},
			{Name: "tool name", Fields: P("type", policy.Enum("tool_reference"), "name", str)},
			{Name: "citations switch", Fields: P("enabled", boolean)},
			{Name: "char citation", Fields: P("type", policy.Enum("char_location"), "cited_text", str, "document_index", num, "document_title", or(str, policy.Null), "start_char_index", num, "end_char_index", num)},
			{Name: "page citation", Fields: P("type", policy.Enum("page_location"), "cited_text", str, "document_index", num, "document_title", or(str, policy.Null), "start_page_number", num, "end_page_number", num)},
			{Name: "block citation", Fields: P("type", policy.Enum("content_block_location"), "cited_text", str, "document_index", num, "document_title", or(str, policy.Null), "start_block_index", num, "end_block_index", num)},
			{Name: "search result citation", Fields: P("type", policy.Enum("search_result_location"), "cited_text", str, "search_result_index", num, "source", str, "title", or(str, policy.Null), "start_block_index", num, "end_block_index", num)},

			// Sources: inline data only.
			{Name: "base64 image", Fields: P("type", policy.Enum("base64"), "media_type", policy.Enum("image/jpeg", "image/png", "image/gif", "image/webp"), "data", str)},
			{Name: "base64 pdf", Fields: P("type", policy.Enum("base64"), "media_type", policy.Enum("application/pdf"), "data", str)},
			{Name: "plain text source", Fields: P("type", policy.Enum("text"), "media_type", policy.Enum("text/plain"), "data", str)},
			{Name: "content source", Fields: P("type", policy.Enum("content"), "content", or(str, list(obj("document content"))))},
		},
		Unions: []policy.Union{
			{Name: "system block", Tag: "type", Members: []policy.Member{{Tag: "text", Shape: "text block"}}},
			{Name: "content block", Tag: "type", Members: []policy.Member{
				{Tag: "text", Shape: "text block"},
				{Tag: "image", Shape: "image block"},
				{Tag: "document", Shape: "document block"},
				{Tag: "search_result", Shape: "search result block"},
				{Tag: "thinking", Shape: "thinking block"},
				{Tag: "redacted_thinking", Shape: "redacted thinking block"},
				{Tag: "tool_use", Shape: "tool use block"},
				{Tag: "tool_result", Shape: "tool result block"},
				{Tag: "tool_addition", Shape: "tool change"},
				{Tag: "tool_removal", Shape: "tool change"},
				{Tag: "server_tool_use", Refused: whyReplay},
				{Tag: "mcp_tool_use", Refused: whyReplay},
				{Tag: "mcp_tool_result", Refused: whyReplay},
				{Tag: "container_upload", Refused: whyFile},
				{Tag: "web_search_tool_result", Refused: whyReplay},
				{Tag: "web_fetch_tool_result", Refused: whyReplay},
				{Tag: "code_execution_tool_result", Refused: whyReplay},
				{Tag: "bash_code_execution_tool_result", Refused: whyReplay},
				{Tag: "text_editor_code_execution_tool_result", Refused: whyReplay},
				{Tag: "tool_search_tool_result", Refused: whyReplay},
			}},
			{Name: "tool result content", Tag: "type", Members: []policy.Member{
				{Tag: "text", Shape: "text block"},
				{Tag: "image", Shape: "image block"},
				{Tag: "document", Shape: "document block"},
				{Tag: "search_result", Shape: "search result block"},
				{Tag: "tool_reference", Shape: "tool reference"},
			}},
			{Name: "document content", Tag: "type", Members: []policy.Member{
				{Tag: "text", Shape: "text block"},
				{Tag: "image", Shape: "image block"},
			}},
			{Name: "image source", Tag: "type", Members: []policy.Member{
				{Tag: "base64", Shape: "base64 image"},
				{Tag: "url", Refused: whyURL},
				{Tag: "file", Refused: whyFile},
			}},
			{Name: "document source", Tag: "type", Members: []policy.Member{
				{Tag: "base64", Shape: "base64 pdf"},
				{Tag: "text", Shape: "plain text source"},
				{Tag: "content", Shape: "content source"},
				{Tag: "url", Refused: whyURL},
				{Tag: "file", Refused: whyFile},
			}},
			{Name: "citation", Tag: "type", Members: []policy.Member{
				{Tag: "char_location", Shape: "char citation"},
				{Tag: "page_location", Shape: "page citation"},
				{Tag: "content_block_location", Shape: "block citation"},
				{Tag: "search_result_location", Shape: "search result citation"},
			}},
			{Name: "changed tool", Tag: "type", Members: []policy.Member{
				{Tag: "tool_definition", Shape: "tool definition"},
				{Tag: "tool_reference", Shape: "tool name"},
			}},
			{Name: "tool", Tag: "type", Untagged: "custom tool", Members: []policy.Member{
				{Tag: "custom", Shape: "custom tool"},
				{Tag: "web_search_", Refused: whyServer, Prefix: true},
				{Tag: "web_fetch_", Refused: whyServer, Prefix: true},
				{Tag: "code_execution_", Refused: whyServer, Prefix: true},
				{Tag: "tool_search_tool_", Refused: whyServer, Prefix: true},
				{Tag: "mcp_toolset", Refused: whyMCP},
			}},
			{Name: "tool choice", Tag: "type", Members: []policy.Member{
				{Tag: "auto", Shape: "auto choice"},
				{Tag: "any", Shape: "any choice"},
				{Tag: "tool", Shape: "named choice"},
				{Tag: "none", Shape: "no choice"},
			}},
			{Name: "thinking", Tag: "type", Members: []policy.Member{
				{Tag: "enabled", Shape: "enabled thinking"},
				{Tag: "adaptive", Shape: "adaptive thinking"},
				{Tag: "disabled", Shape: "disabled thinking"},
			}},
			{Name: "context edit", Tag: "type", Members: []policy.Member{
				{Tag: "clear_tool_uses_20250919", Shape: "clear tool uses"},
				{Tag: "clear_thinking_20251015", Shape: "clear thinking"},
			}},
			{Name: "output format", Tag: "type", Members: []policy.Member{
				{Tag: "json_schema", Shape: "json schema format"},
			}},
		},
	}
	return t.MustCompile()
}
