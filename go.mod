module devtools-mcp

go 1.25

require (
	github.com/coder/websocket v1.8.15
	github.com/google/go-cmp v0.7.0
)
