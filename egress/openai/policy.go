package openai

import (
	"sync"

	"github.com/aisan-dev/aisan/egress/policy"
)

// The body policies, as codex-cli 0.171.0 uses the Responses API and
// opencode 1.18.33 (through @ai-sdk/openai-compatible) uses chat
// completions; the rows were seeded from the bodies they send in the
// end-to-end tests (egress/policy/testdata) and the fixtures beside this
// file. What the provider would do outside the box is refused by name;
// anything else they do not list is refused as unknown.

const (
	whyHosted = "the provider runs it on its servers, which reach the network for the box"
	whyStored = "it refers to state stored on the provider's servers, which strict mode does not use"
	// whyWhole is why an input item must carry what the client sends of
	// it: the API reads one that names only its id as a stored item.
	whyWhole     = "a whole item as the client sends it: one that names only its id reads a stored item"
	whyReplay    = "it replays a tool that ran on the provider's servers; strict mode runs no tools there"
	whyMCP       = "it drives MCP servers from the provider's side; the box's own MCP servers run in the box"
	whyFileRef   = "it names a file the provider stores or fetches; attach the data itself"
	whyInline    = "only inline (data:) images are allowed: the provider would fetch any other URL"
	whyInlineAny = "only inline (data:) files are allowed: the provider would fetch any other URL"
	whyStore     = "stored responses live on the provider's servers"
	whyExec      = "a tool search the provider runs searches tools the box did not send"
	whySearch    = "it makes the provider search the web or run plugins"
	whyUsage     = "the box's tokens are counted from the usage its stream reports"
)

// modelName is any model but a router's web-search variant: a model
// name ending ":online" (OpenRouter) searches the web as the "plugins"
// field would.
var modelName = policy.StrNotEnding(whySearch, ":online")

// BetaFeatures are the x-codex-beta-features values codex 0.171.0 sends:
// the keys of its experimental features (codex features list), each
// switching the ChatGPT backend's behaviour for the call when on, and the
// one it adds itself (remote_compaction_v2, on every call of the
// real-client tests). Any other is refused.
var BetaFeatures = []string{
	"analytics_plan_history",
	"login_shell_package_path",
	"network_proxy",
	"prevent_idle_sleep",
	"remote_compaction_v2",
	"respect_system_proxy",
	"tui_extensions_statusline",
}

// responsesHeaders are the listed request headers of POST /responses. The
// other headers codex sends (CodexForward) carry no switch and stay
// unchecked: originator, version and user-agent name the client;
// session, thread, window, turn and installation ids, x-codex-turn-state
// (the backend's own opaque token, sent back) and x-codex-turn-metadata
// (a JSON description of the turn, also in the body's client_metadata)
// are free-form metadata.
var responsesHeaders = []policy.HeaderList{
	{Name: "x-codex-beta-features", Values: BetaFeatures, Note: "codex's experimental features"},
	{Name: "x-openai-internal-codex-responses-lite", Values: []string{"true"}, Note: "codex's Responses Lite marker"},
}

var (
	responsesOnce = sync.OnceValue(responsesTable)
	chatOnce      = sync.OnceValue(chatTable)
)

// ResponsesPolicy is the body policy of POST /responses.
func ResponsesPolicy() *policy.Table { return responsesOnce() }

// ChatPolicy is the body policy of POST /chat/completions.
func ChatPolicy() *policy.Table { return chatOnce() }

func responsesTable() *policy.Table {
	P := policy.Fields
	str, num, boolean, anyJSON := policy.Str, policy.Num, policy.Bool, policy.Any
	obj, list, or := policy.Obj, policy.List, policy.Or
	tools := list(obj("tool"))
	output := or(str, list(obj("output part")))

	body := append(P(
		"model", modelName,
		"instructions", str,
		"input", or(str, list(obj("input item"))),
		"tools", tools,
		"tool_choice", policy.Enum("auto", "none", "required"),
		"parallel_tool_calls", boolean,
		"reasoning", obj("reasoning"),
		"store", policy.Lit(false, whyStore),
		"stream", boolean,
		"include", list(policy.Enum("reasoning.encrypted_content")),
		"service_tier", str,
		"prompt_cache_key", str,
		"text", obj("text"),
		"client_metadata", policy.Map(str),
		"max_output_tokens", num,
		"temperature", num,
		"top_p", num,
	),
		policy.Field{Name: "background", Refused: "a background response runs on the provider's servers after the box's request ends"},
		policy.Field{Name: "conversation", Refused: whyStored},
		policy.Field{Name: "previous_response_id", Refused: whyStored},
		policy.Field{Name: "prompt", Refused: "it names a prompt template stored on the provider's servers"},
	)

	t := &policy.Table{
		Name:    "OpenAI Responses",
		Root:    "body",
		Headers: responsesHeaders,
		Shapes: []policy.Shape{
			{Name: "body", Fields: body, Required: []string{"store"},
				Note: "store must be sent: the API stores a response that does not say false"},
			{Name: "reasoning", Fields: P("effort", str, "summary", str, "context", str)},
			{Name: "text", Fields: P("verbosity", policy.Enum("low", "medium", "high"), "format", obj("text format"))},
			{Name: "json schema format", Fields: P("type", policy.Enum("json_schema"), "name", str, "schema", anyJSON, "strict", boolean, "description", str)},
			{Name: "plain format", Fields: P("type", policy.Enum("text", "json_object"))},

			// Input items.
			{Name: "untagged message", Fields: P(
				"role", policy.Enum("user", "assistant", "developer", "system"),
				"content", or(str, list(obj("content part"))),
				"phase", str,
			), Required: []string{"role", "content"},
				Note: "an input item without a type; it must be a whole message, since the API reads {\"id\": …} alone as an item_reference"},
			{Name: "message", Fields: P(
				"type", policy.Enum("message"),
				"id", str,
				"role", policy.Enum("user", "assistant", "developer", "system"),
				"content", or(str, list(obj("content part"))),
				"status", str,
				"phase", str,
			), Required: []string{"role", "content"},
				Note: "a whole message: one that names only its id reads a stored item"},
			{Name: "reasoning item", Fields: P(
				"type", policy.Enum("reasoning"),
				"id", str,
				"summary", list(obj("reasoning text")),
				"content", or(policy.Null, list(obj("reasoning text"))),
				"encrypted_content", or(str, policy.Null),
				"status", str,
			), Required: []string{"summary"}, Note: whyWhole},
			{Name: "function call", Fields: P(
				"type", policy.Enum("function_call"),
				"id", str,
				"call_id", str,
				"name", str,
				"namespace", str,
				"arguments", str,
				"status", str,
			), Required: []string{"call_id", "name", "arguments"}, Note: whyWhole},
			{Name: "function call output", Fields: P("type", policy.Enum("function_call_output"), "id", str, "call_id", str, "output", output, "status", str), Required: []string{"call_id", "output"}, Note: whyWhole},
			{Name: "custom tool call", Fields: P(
				"type", policy.Enum("custom_tool_call"),
				"id", str,
				"call_id", str,
				"name", str,
				"namespace", str,
				"input", str,
				"status", str,
			), Required: []string{"call_id", "name", "input"}, Note: whyWhole},
			{Name: "custom tool call output", Fields: P("type", policy.Enum("custom_tool_call_output"), "id", str, "call_id", str, "output", output, "status", str), Required: []string{"call_id", "output"}, Note: whyWhole},
			{Name: "local shell call", Fields: P("type", policy.Enum("local_shell_call"), "id", str, "call_id", str, "status", str, "action", obj("local shell action")), Required: []string{"action"}, Note: whyWhole},
			{Name: "local shell action", Fields: P(
				"type", policy.Enum("exec"),
				"command", list(str),
				"timeout_ms", or(num, policy.Null),
				"working_directory", or(str, policy.Null),
				"env", or(policy.Map(str), policy.Null),
				"user", or(str, policy.Null),
			)},
			{Name: "tool search call", Fields: P(
				"type", policy.Enum("tool_search_call"),
				"id", str,
				"call_id", str,
				"status", str,
				"execution", policy.Lit("client", whyExec),
				"arguments", anyJSON,
			), Required: []string{"arguments"}, Note: whyWhole},
			{Name: "tool search output", Fields: P(
				"type", policy.Enum("tool_search_output"),
				"id", str,
				"call_id", str,
				"status", str,
				"execution", policy.Lit("client", whyExec),
				"tools", tools,
			), Required: []string{"tools"}, Note: "the client's search results: the tools it now offers"},
			{Name: "additional tools item", Fields: P(
				"type", policy.Enum("additional_tools"),
				"id", str,
				"role", policy.Enum("developer"),
				"tools", tools,
			), Required: []string{"tools"}, Note: "codex's code mode sends its tools as an input item"},
			{Name: "compaction", Fields: P("type", policy.Enum("compaction", "compaction_summary"), "id", str, "encrypted_content", str),
				Required: []string{"encrypted_content"}, Note: "a summary of earlier turns, opaque to the client; one that names only its id reads a stored item"},

			// Content.
			{Name: "input text", Fields: P("type", policy.Enum("input_text"), "text", str)},
			{Name: "output text", Fields: P("type", policy.Enum("output_text"), "text", str, "annotations", list(anyJSON), "logprobs", list(anyJSON))},
			{Name: "refusal text", Fields: P("type", policy.Enum("refusal"), "refusal", str)},
			{Name: "input image", Fields: append(P(
				"type", policy.Enum("input_image"),
				"image_url", policy.Prefixed(whyInline, "data:"),
				"detail", policy.Enum("auto", "low", "high", "original"),
			), policy.Field{Name: "file_id", Refused: whyFileRef})},
			{Name: "reasoning text", Fields: P("type", policy.Enum("summary_text", "reasoning_text", "text"), "text", str)},

			// Tools: each in the form the client runs.
			{Name: "function tool", Fields: P(
				"type", policy.Enum("function"),
				"name", str,
				"description", str,
				"parameters", anyJSON,
				"strict", boolean,
				"defer_loading", boolean,
			)},
			{Name: "custom tool", Fields: P("type", policy.Enum("custom"), "name", str, "description", str, "format", obj("custom format"), "defer_loading", boolean)},
			{Name: "text input", Fields: P("type", policy.Enum("text"))},
			{Name: "grammar input", Fields: P("type", policy.Enum("grammar"), "syntax", policy.Enum("lark", "regex"), "definition", str)},
			{Name: "namespace tool", Fields: P("type", policy.Enum("namespace"), "name", str, "description", str, "tools", tools),
				Required: []string{"tools"}, Note: "a group of the client's tools; one without tools would be the provider's to fill"},
			{Name: "tool search tool", Fields: P(
				"type", policy.Enum("tool_search"),
				"execution", policy.Lit("client", whyExec),
				"description", str,
				"parameters", anyJSON,
			), Required: []string{"execution"}},
			{Name: "local shell tool", Fields: P("type", policy.Enum("local_shell"))},
			{Name: "shell tool", Fields: P("type", policy.Enum("shell"), "environment", obj("shell environment")),
				Note: "the shell the client runs; a hosted container is refused"},
			{Name: "local environment", Fields: P("type", policy.Enum("local"))},
			{Name: "apply patch tool", Fields: P("type", policy.Enum("apply_patch"))},
		},
		Unions: []policy.Union{
			{Name: "input item", Tag: "type", Untagged: "untagged message", Members: []policy.Member{
				{Tag: "message", Shape: "message"},
				{Tag: "reasoning", Shape: "reasoning item"},
				{Tag: "function_call", Shape: "function call"},
				{Tag: "function_call_output", Shape: "function call output"},
				{Tag: "custom_tool_call", Shape: "custom tool call"},
				{Tag: "custom_tool_call_output", Shape: "custom tool call output"},
				{Tag: "local_shell_call", Shape: "local shell call"},
				{Tag: "tool_search_call", Shape: "tool search call"},
				{Tag: "tool_search_output", Shape: "tool search output"},
				{Tag: "additional_tools", Shape: "additional tools item"},
				{Tag: "compaction", Shape: "compaction"},
				{Tag: "compaction_summary", Shape: "compaction"},
				{Tag: "item_reference", Refused: whyStored},
				{Tag: "mcp_", Refused: whyMCP, Prefix: true},
				{Tag: "web_search_call", Refused: whyReplay},
				{Tag: "file_search_call", Refused: whyReplay},
				{Tag: "code_interpreter_call", Refused: whyReplay},
				{Tag: "image_generation_call", Refused: whyReplay},
				{Tag: "computer_call", Refused: whyHosted},
				{Tag: "computer_call_output", Refused: whyHosted},
				{Tag: "shell_call", Refused: "only codex's own shell tools are served, which report as function calls"},
			}},
			{Name: "content part", Tag: "type", Members: []policy.Member{
				{Tag: "input_text", Shape: "input text"},
				{Tag: "output_text", Shape: "output text"},
				{Tag: "refusal", Shape: "refusal text"},
				{Tag: "input_image", Shape: "input image"},
				{Tag: "input_file", Refused: whyFileRef},
			}},
			{Name: "output part", Tag: "type", Members: []policy.Member{
				{Tag: "input_text", Shape: "input text"},
				{Tag: "input_image", Shape: "input image"},
				{Tag: "input_file", Refused: whyFileRef},
			}},
			{Name: "text format", Tag: "type", Members: []policy.Member{
				{Tag: "json_schema", Shape: "json schema format"},
				{Tag: "text", Shape: "plain format"},
				{Tag: "json_object", Shape: "plain format"},
			}},
			{Name: "custom format", Tag: "type", Members: []policy.Member{
				{Tag: "text", Shape: "text input"},
				{Tag: "grammar", Shape: "grammar input"},
			}},
			{Name: "shell environment", Tag: "type", Members: []policy.Member{
				{Tag: "local", Shape: "local environment"},
				{Tag: "container_", Refused: "a hosted container runs commands on the provider's servers, with network access", Prefix: true},
			}},
			{Name: "tool", Tag: "type", Members: []policy.Member{
				{Tag: "function", Shape: "function tool"},
				{Tag: "custom", Shape: "custom tool"},
				{Tag: "namespace", Shape: "namespace tool"},
				{Tag: "tool_search", Shape: "tool search tool"},
				{Tag: "local_shell", Shape: "local shell tool"},
				{Tag: "shell", Shape: "shell tool"},
				{Tag: "apply_patch", Shape: "apply patch tool"},
				{Tag: "web_search", Refused: whyHosted, Prefix: true},
				{Tag: "file_search", Refused: whyHosted},
				{Tag: "code_interpreter", Refused: whyHosted},
				{Tag: "computer", Refused: whyHosted, Prefix: true},
				{Tag: "image_generation", Refused: whyHosted},
				{Tag: "mcp", Refused: whyMCP},
			}},
		},
	}
	return t.MustCompile()
}

func chatTable() *policy.Table {
	P := policy.Fields
	str, num, boolean, anyJSON := policy.Str, policy.Num, policy.Bool, policy.Any
	obj, list, or := policy.Obj, policy.List, policy.Or

	body := P(
		"model", modelName,
		"messages", list(obj("message")),
		"stream", boolean,
		"stream_options", obj("stream options"),
		"tools", list(obj("tool")),
		"tool_choice", or(policy.Enum("auto", "none", "required"), obj("tool choice")),
		"parallel_tool_calls", boolean,
		"temperature", num,
		"top_p", num,
		"top_k", num,
		"max_tokens", num,
		"max_completion_tokens", num,
		"frequency_penalty", num,
		"presence_penalty", num,
		"seed", num,
		"stop", or(str, list(str)),
		"response_format", obj("response format"),
		"reasoning_effort", str,
		"thinking", obj("thinking"),
		"user", str,
		"store", policy.Lit(false, "stored completions live on the provider's servers"),
	)
	for _, k := range []string{"web_search_options", "plugins", "search_parameters", "enable_search", "web_search", "search"} {
		body = append(body, policy.Field{Name: k, Refused: whySearch})
	}
	t := &policy.Table{
		Name: "OpenAI-compatible chat completions",
		Root: "body",
		Shapes: []policy.Shape{
			{Name: "body", Fields: body,
				Note: "model must also be one the host names (opencode's model and small_model for the provider, the models its declaration lists, or --model): a model name can switch on tools the provider runs"},
			{Name: "stream options", Fields: P("include_usage", policy.Lit(true, whyUsage)), Required: []string{"include_usage"},
				Note: "a call with stream true must send it: the box's tokens are counted from the usage its stream reports"},
			{Name: "thinking", Fields: P("type", policy.Enum("enabled", "disabled"), "clear_thinking", boolean, "budget_tokens", num),
				Note: "the reasoning switch of providers that take one (opencode's catalog sets it)"},
			{Name: "named tool choice", Fields: P("type", policy.Enum("function"), "function", obj("function name"))},
			{Name: "function name", Fields: P("name", str)},
			{Name: "json schema response", Fields: P("type", policy.Enum("json_schema"), "json_schema", obj("json schema"))},
			{Name: "json schema", Fields: P("name", str, "description", str, "schema", anyJSON, "strict", boolean)},
			{Name: "plain response", Fields: P("type", policy.Enum("text", "json_object"))},
			{Name: "message", Fields: P(
				"role", policy.Enum("system", "developer", "user", "assistant", "tool"),
				"content", or(str, policy.Null, list(obj("content part"))),
				"name", str,
				"tool_calls", list(obj("tool call")),
				"tool_call_id", str,
				"reasoning_content", str,
				"reasoning", str,
			)},
			{Name: "text part", Fields: P("type", policy.Enum("text"), "text", str)},
			{Name: "image part", Fields: P("type", policy.Enum("image_url"), "image_url", obj("image url"))},
			{Name: "image url", Fields: P("url", policy.Prefixed(whyInline, "data:"), "detail", policy.Enum("auto", "low", "high"))},
			{Name: "file part", Fields: P("type", policy.Enum("file"), "file", obj("inline file"))},
			{Name: "inline file", Fields: append(P("filename", str, "file_data", policy.Prefixed(whyInlineAny, "data:")),
				policy.Field{Name: "file_id", Refused: whyFileRef})},
			{Name: "tool call", Fields: P("id", str, "type", policy.Enum("function"), "function", obj("function call"))},
			{Name: "function call", Fields: P("name", str, "arguments", str)},
			{Name: "function tool", Fields: P("type", policy.Enum("function"), "function", obj("function definition"))},
			{Name: "function definition", Fields: P("name", str, "description", str, "parameters", anyJSON, "strict", boolean)},
		},
		Unions: []policy.Union{
			{Name: "content part", Tag: "type", Members: []policy.Member{
				{Tag: "text", Shape: "text part"},
				{Tag: "image_url", Shape: "image part"},
				{Tag: "file", Shape: "file part"},
			}},
			{Name: "tool", Tag: "type", Members: []policy.Member{
				{Tag: "function", Shape: "function tool"},
				{Tag: "web_search", Refused: whyHosted, Prefix: true},
				{Tag: "code_interpreter", Refused: whyHosted},
				{Tag: "retrieval", Refused: whyHosted},
			}},
			{Name: "tool choice", Tag: "type", Members: []policy.Member{{Tag: "function", Shape: "named tool choice"}}},
			{Name: "response format", Tag: "type", Members: []policy.Member{
				{Tag: "json_schema", Shape: "json schema response"},
				{Tag: "text", Shape: "plain response"},
				{Tag: "json_object", Shape: "plain response"},
			}},
		},
	}
	return t.MustCompile()
}
