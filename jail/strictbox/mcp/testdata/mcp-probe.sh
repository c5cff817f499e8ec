#!/bin/sh
# mcp-probe: a tiny stdio MCP server for tests. It speaks newline-delimited
# JSON-RPC 2.0 on stdin/stdout and offers four tools that report what the
# process can see from where it runs:
#   echo {text}   returns text
#   env           returns the names of its environment variables
#   read {path}   returns the file's content, or the error
#   net           returns the network interfaces it sees (/proc/net/dev,
#                 which shows the process's own network namespace)
# With MCP_PROBE_LOG set it appends every request line to that file, so a
# test can tell that (and where) the server started.
# It relies only on POSIX sh and sed, so a box with /usr bound can run it.
# Its JSON handling is naive on purpose: requests come from test code, and
# an "id" key inside tool arguments would confuse it.

esc() {
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/	/\\t/g' | sed -e ':a' -e 'N' -e '$!ba' -e 's/\n/\\n/g'
}

field() { # field NAME LINE: the first string value of "NAME" in LINE
	printf '%s\n' "$2" | sed -n -E "s/.*\"$1\"[[:space:]]*:[[:space:]]*\"([^\"]*)\".*/\\1/p"
}

reply() { # reply ID RESULT
	printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$1" "$2"
}

text() { # text STRING: a tools/call result holding STRING
	printf '{"content":[{"type":"text","text":"%s"}]}' "$(printf '%s' "$1" | esc)"
}

tools='{"tools":[
{"name":"echo","description":"Return the text argument.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}},
{"name":"env","description":"List the names of the server environment variables.","inputSchema":{"type":"object","properties":{}}},
{"name":"read","description":"Read a file and return its content or the error.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}},
{"name":"net","description":"List the network interfaces the server sees.","inputSchema":{"type":"object","properties":{}}}]}'
tools=$(printf '%s' "$tools" | tr -d '\n')

while IFS= read -r line; do
	[ -n "$MCP_PROBE_LOG" ] && printf '%s\n' "$line" >>"$MCP_PROBE_LOG"
	id=$(printf '%s\n' "$line" | sed -n -E 's/.*"id"[[:space:]]*:[[:space:]]*("[^"]*"|-?[0-9]+).*/\1/p')
	method=$(field method "$line")
	[ -z "$id" ] && continue # a notification wants no answer
	case $method in
	initialize)
		v=$(field protocolVersion "$line")
		reply "$id" "{\"protocolVersion\":\"${v:-2025-06-18}\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"mcp-probe\",\"version\":\"1\"}}"
		;;
	ping) reply "$id" '{}' ;;
	tools/list) reply "$id" "$tools" ;;
	tools/call)
		case $(field name "$line") in
		echo) reply "$id" "$(text "$(field text "$line")")" ;;
		env) reply "$id" "$(text "$(env | sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\)=.*/\1/p' | sort)")" ;;
		read) reply "$id" "$(text "$(cat -- "$(field path "$line")" 2>&1)")" ;;
		net) reply "$id" "$(text "$(sed -n 's/^ *\([^:]*\):.*/\1/p' /proc/net/dev 2>&1)")" ;;
		*) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"unknown tool"}}\n' "$id" ;;
		esac
		;;
	*) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}\n' "$id" ;;
	esac
done
