package main

// session_stacks.go is how answers have stacks mapped to source: through
// the stackMapper serve hands down (release builds' source maps and
// Metro's /symbolicate, symbolicate_local.go), or not at all in tests that
// give none.

import "context"

// stackMapper maps the bundle-URL frames of stacks to source
// (symbolicator.mapStacks): one slice per stack, one element per
// frame, and why frames that could be mapped were not.
type stackMapper interface {
	mapStacks(ctx context.Context, stacks []jsStack) ([][]mappedFrame, error)
}

// mapStacks maps stacks' frames through the configured mapper; with none,
// every frame comes back as it is, with errMetroOff.
func (q *adapterQueries) mapStacks(ctx context.Context, stacks []jsStack) ([][]mappedFrame, error) {
	if q.stacks != nil {
		return q.stacks.mapStacks(ctx, stacks)
	}
	return unmappedFrames(stacks), errMetroOff
}
