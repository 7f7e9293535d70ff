package main

// symbolicate_call.go is one request of the /symbolicate client
// (symbolicate_client.go): /status for the project root, then the frames,
// and the reading of Metro's answer, which is bounded and trusted in
// nothing: an answer is matched to frames by the tag Metro echoes, and a
// frame counts as mapped only when it names a file, a line and a column.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// do runs one call: /status when its answer is stale, then /symbolicate
// (once more on a 500), and puts the answers in the cache. A 5xx is not
// put there: the bundle may build again after the next save, and the call's
// readers get the error from c.err.
func (m *symbolicator) do(c *symbolicateCall) {
	m.mu.Lock()
	timeout := symbolicateTimeout
	if !m.answered {
		timeout = symbolicateFirstTimeout
	}
	askStatus := m.statusAt.IsZero() || m.now().Sub(m.statusAt) > symbolicateStatusFor
	m.mu.Unlock()
	ctx, cancel := context.WithTimeout(m.life, timeout)
	defer cancel()

	var answers map[symbolicateKey]mappedFrame
	err := func() error {
		if askStatus {
			if err := m.askStatus(ctx); err != nil {
				return err
			}
		}
		var err error
		for attempt := 0; attempt < 2; attempt++ {
			answers, err = m.symbolicate(ctx, c)
			var refused *errMetro
			if !errors.As(err, &refused) || refused.kind != metroRefused || refused.Status != http.StatusInternalServerError {
				break
			}
		}
		return err
	}()

	m.mu.Lock()
	defer m.mu.Unlock()
	m.calling--
	for _, k := range c.keys {
		if m.inflight[k] == c {
			delete(m.inflight, k)
		}
	}
	var metroErr *errMetro
	errors.As(err, &metroErr)
	refused := metroErr != nil && metroErr.kind == metroRefused
	switch {
	case metroErr != nil && metroErr.kind == metroUnreachable:
		// Answers already had stay: Metro down is when they are needed.
		m.downUntil, m.downErr = m.now().Add(symbolicateDownFor), metroErr.Err
		m.wasDown = true
		m.statusAt = time.Time{}
	case refused && metroErr.Status >= 500:
		m.answered = true
	case err == nil || refused: // refused by a 4xx: each frame keeps why
		m.answered = true
		if err != nil {
			answers = make(map[symbolicateKey]mappedFrame, len(c.keys))
			for _, k := range c.keys {
				answers[k] = mappedFrame{jsFrame: jsFrame{Method: c.method[k]}}
			}
		}
		m.remember(len(answers))
		at := m.now()
		for k, f := range answers {
			m.frames[k] = cachedFrame{frame: f, err: err, at: at}
		}
	}
	c.err = err
	close(c.done)
}

// remember makes room for n more frames in the cache: answers no longer
// trusted go first, and when that is not enough, all of them (the frames
// of one call are kept whole: its readers find them there). m.mu is held.
func (m *symbolicator) remember(n int) {
	if len(m.frames)+n <= m.maxFrames {
		return
	}
	now := m.now()
	for k, f := range m.frames {
		if now.Sub(f.at) >= symbolicateFrameFor {
			delete(m.frames, k)
		}
	}
	if len(m.frames)+n > m.maxFrames {
		clear(m.frames)
	}
}

// askStatus reads the project root from Metro's /status (metroProjectRoot).
// A Metro without /status (plain `metro`) leaves the root unknown; file
// names then stay absolute.
func (m *symbolicator) askStatus(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.origin+"/status", nil)
	if err != nil {
		return &errMetro{kind: metroUnreachable, Origin: m.origin, Err: err}
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return &errMetro{kind: metroUnreachable, Origin: m.origin, Err: err}
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxStatusAnswer))
	resp.Body.Close()
	root := ""
	if resp.StatusCode == http.StatusOK && strings.Contains(string(body), "packager-status:running") {
		root = metroProjectRoot(resp.Header)
	}
	m.mu.Lock()
	// A Metro that was down and answers again may be another process,
	// serving other code; a different root is another project.
	if root != m.root || m.wasDown {
		clear(m.frames)
		m.root, m.wasDown = root, false
	}
	m.statusAt = m.now()
	m.mu.Unlock()
	return nil
}

// symbolicateFrame is a frame as Metro reads it; a nameless one is sent
// with a null methodName.
type symbolicateFrame struct {
	File       string  `json:"file"`
	LineNumber int     `json:"lineNumber"`
	Column     int     `json:"column"`
	MethodName *string `json:"methodName"`
	// Tag is a property Metro echoes back unchanged, by which answers are
	// matched to frames: a customizeStack hook may reorder them.
	Tag int `json:"devtoolsMcpFrame"`
}

// symbolicateTag is the name of symbolicateFrame.Tag.
const symbolicateTag = "devtoolsMcpFrame"

// symbolicate posts c's frames and reads the answers, matched by tag.
func (m *symbolicator) symbolicate(ctx context.Context, c *symbolicateCall) (map[symbolicateKey]mappedFrame, error) {
	frames := make([]symbolicateFrame, len(c.keys))
	for i, k := range c.keys {
		frames[i] = symbolicateFrame{File: k.url, LineNumber: k.line, Column: k.column, Tag: i}
		if name := c.method[k]; name != "" {
			frames[i].MethodName = &name
		}
	}
	body, err := json.Marshal(struct {
		Stack []symbolicateFrame `json:"stack"`
	}{frames})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.origin+"/symbolicate", bytes.NewReader(body))
	if err != nil {
		return nil, &errMetro{kind: metroUnreachable, Origin: m.origin, Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := m.client.Do(req)
	if err != nil {
		return nil, &errMetro{kind: metroUnreachable, Origin: m.origin, Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxSymbolicateAnswer+1))
	if err != nil {
		return nil, &errMetro{kind: metroUnreachable, Origin: m.origin, Err: err}
	}
	refused := func(msg string) error {
		return &errMetro{kind: metroRefused, Origin: m.origin, Status: resp.StatusCode, Message: msg}
	}
	if len(data) > maxSymbolicateAnswer {
		return nil, refused(fmt.Sprintf("an answer over %d bytes", maxSymbolicateAnswer))
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(data, &e) != nil || e.Error == "" {
			e.Error = http.StatusText(resp.StatusCode)
		}
		return nil, refused(clipText(strings.TrimSpace(e.Error), 300))
	}
	out, err := readSymbolicateAnswer(data, c.keys, c.method)
	if err != nil {
		return nil, refused(err.Error())
	}
	return out, nil
}

// readSymbolicateAnswer reads a 200 answer to the frames keys (tagged by
// index), named by method: every key gets an answer, unmapped when Metro
// could not map it. Frames are read by readFrameValue; codeFrame (source
// text with colours) is not.
func readSymbolicateAnswer(data []byte, keys []symbolicateKey, method map[symbolicateKey]string) (map[symbolicateKey]mappedFrame, error) {
	stack := rawMember(data, "stack")
	if !json.Valid(data) || rawKind(data) != "object" || rawKind(stack) != "array" {
		return nil, errors.New("not an object with a stack array")
	}
	// Frames the answer leaves out are remembered as unmapped: asking again
	// would get the same.
	out := make(map[symbolicateKey]mappedFrame, len(keys))
	for _, k := range keys {
		out[k] = mappedFrame{jsFrame: jsFrame{Method: method[k]}}
	}
	_ = eachElement(stack, func(_ int, v []byte) bool {
		tag, ok := wireInt(rawMember(v, symbolicateTag))
		if !ok || tag < 0 || tag >= int64(len(keys)) {
			return true
		}
		k := keys[tag]
		mf := mappedFrame{jsFrame: jsFrame{Method: method[k]}}
		f, ok := readFrameValue(v)
		if ok && f.Method != "" {
			mf.Method = f.Method
		}
		// A frame Metro could not map comes back with its URL (or, under
		// Expo's config, with nulls).
		if ok && f.File != "" && f.Kind != frameURL && f.Line >= 1 && f.Column >= 1 {
			f.Method = mf.Method
			mf.jsFrame, mf.Mapped = f, true
		}
		mf.Collapse = string(rawMember(v, "collapse")) == "true"
		out[k] = mf
		return true
	})
	return out, nil
}
