package main

// session_stacks.go is how answers have stacks mapped to source: through
// the stackMapper serve hands down (Metro's /symbolicate client,
// symbolicate_client.go), or not at all when METRO_URL is off.

import (
	"context"
	"errors"
)

// stackMapper maps the bundle-URL frames of stacks to source
// (symbolicator.mapStacks): one slice per stack, one element per
// frame, and why frames that could be mapped were not.
type stackMapper interface {
	mapStacks(ctx context.Context, stacks []jsStack) ([][]mappedFrame, error)
}

// errStacksOff: no Metro is configured (METRO_URL=off).
var errStacksOff = errors.New("stack mapping is off")

// mapStacks maps stacks' frames through the configured Metro; with none,
// every frame comes back as it is, with errStacksOff.
func (q *adapterQueries) mapStacks(ctx context.Context, stacks []jsStack) ([][]mappedFrame, error) {
	if q.stacks != nil {
		return q.stacks.mapStacks(ctx, stacks)
	}
	out := make([][]mappedFrame, len(stacks))
	for i, st := range stacks {
		out[i] = make([]mappedFrame, len(st.Frames))
		for j, f := range st.Frames {
			out[i][j] = mappedFrame{jsFrame: f}
		}
	}
	return out, errStacksOff
}
