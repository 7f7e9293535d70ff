package main

// rpc_relay_exchange.go is the relay's one HTTP exchange with the process
// holding the adapter port, whatever it asks (a relayed request, the probe,
// the listen stream): the request as a stateless 2026-07-28 client writes
// it, and the checks that refuse an answer from another kind of server or
// from this very server.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// Why the relay cannot use an answer.
var (
	// errRelayUnreachable: nothing answered, or the answer did not arrive.
	errRelayUnreachable = errors.New("the process holding the adapter port did not answer")
	// errRelayNotMCP: what holds the port is not a devtools-mcp answering MCP.
	errRelayNotMCP = errors.New("the process holding the adapter port does not answer MCP")
)

// relayReply is the JSON-RPC answer of the holder.
type relayReply struct {
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

// exchange posts method with params (to which it adds the relay's _meta)
// to the holder as request id, and returns the response once its
// Content-Type is want: the caller reads and closes its body. self says the
// answer came from this very server (holderInstanceHeader). name is the
// Mcp-Name header ("" for none). An error is errRelayUnreachable or
// errRelayNotMCP, wrapped.
func (rl *relay) exchange(ctx context.Context, client *http.Client, id any, method string, params map[string]json.RawMessage,
	name, want string) (resp *http.Response, self bool, err error) {
	withMeta := make(map[string]any, len(params)+1)
	for k, v := range params {
		withMeta[k] = v
	}
	withMeta["_meta"] = map[string]any{metaProtocolVersion: modernVersions[0], metaClientCapabilities: map[string]any{},
		metaClientInfo: json.RawMessage(serverInfoJSON)} // replaces the caller's: the relay speaks for itself
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": withMeta})
	if err != nil {
		return nil, false, fmt.Errorf("%w: %s: %v", errRelayUnreachable, method, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rl.url, bytes.NewReader(body))
	if err != nil {
		return nil, false, fmt.Errorf("%w: %v", errRelayUnreachable, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", modernVersions[0])
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err = client.Do(req)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %v", errRelayUnreachable, err)
	}
	if got := resp.Header.Get("Content-Type"); got != want {
		resp.Body.Close()
		return nil, false, fmt.Errorf("%w: %s answered with Content-Type %q", errRelayNotMCP, method, got)
	}
	return resp, resp.Header.Get(holderInstanceHeader) == rl.instance, nil
}

// readRelayReply reads the JSON-RPC answer in resp's body, bounded by
// maxHTTPBodyBytes. An answer that is neither a result nor an error is
// errRelayNotMCP.
func readRelayReply(resp *http.Response) (relayReply, error) {
	var msg relayReply
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPBodyBytes+1))
	switch {
	case err != nil:
		return msg, fmt.Errorf("reply unreadable: %w", err)
	case len(data) > maxHTTPBodyBytes:
		return msg, fmt.Errorf("reply over %d bytes", maxHTTPBodyBytes)
	}
	if json.Unmarshal(data, &msg) != nil || (msg.Result == nil && msg.Error == nil) {
		return relayReply{}, fmt.Errorf("%w: the reply is not a JSON-RPC answer", errRelayNotMCP)
	}
	return msg, nil
}
