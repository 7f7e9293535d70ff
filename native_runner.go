package main

// native_runner.go is the one place that starts, restarts and ends the
// native side's child processes. Every command comes from the closed list
// (native_commands.go). A child is started with the follower's context and
// ended with it: on Unix it leads its own process group, and the whole
// group is killed when the context ends (xcrun's `simctl spawn` starts
// `log` under it), so no adb or log process outlives the server.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// maxNativeLine is the longest line read from a child; the cut is counted.
	maxNativeLine = 16 << 10
	// maxNativeOutput bounds the whole output of a short command.
	maxNativeOutput = 256 << 10
	// nativeCommandTimeout bounds a short command (devices, pidof, list).
	nativeCommandTimeout = 10 * time.Second
	// nativeWaitDelay is how long a killed child's pipes are waited for.
	nativeWaitDelay = 2 * time.Second
	// Restart backoff of a stream that ended: from min, doubling to max
	// while it ends within nativeQuickExit of starting.
	nativeMinBackoff = time.Second
	nativeMaxBackoff = 30 * time.Second
	nativeQuickExit  = 10 * time.Second
)

var errNativeOutput = errors.New("native command output over the bound")

// nativeRunner runs commands of the closed list with the tools found.
// Its methods are safe for concurrent use.
type nativeRunner struct {
	paths                  map[string]string // tool → executable path
	minBackoff, maxBackoff time.Duration     // the NativePoll tunable shortens them
	cutLines               atomic.Int64      // lines longer than maxNativeLine
	// env is the children's environment; logTags what childEnv left out.
	env     []string
	logTags string
	now     func() time.Time // tests set the clock

	mu     sync.Mutex
	server nativeServerStart // the last adb server start an adb command made
}

func newNativeRunner(paths map[string]string) *nativeRunner {
	env, logTags := childEnv(os.Environ())
	return &nativeRunner{paths: paths, minBackoff: nativeMinBackoff, maxBackoff: nativeMaxBackoff,
		env: env, logTags: logTags, now: time.Now}
}

// command builds the child of c, ended with ctx.
func (r *nativeRunner) command(ctx context.Context, c nativeCommand) (*exec.Cmd, error) {
	path := r.paths[c.tool]
	if path == "" {
		return nil, fmt.Errorf("%s: %w", c.tool, exec.ErrNotFound)
	}
	cmd := exec.CommandContext(ctx, path, c.args...) // no stdin
	cmd.Env = r.env
	tail := &stderrTail{}
	if c.tool == nativeToolADB {
		tail.seen = r.adbServerLine
	}
	cmd.Stderr = tail
	ownProcessGroup(cmd)
	cmd.WaitDelay = nativeWaitDelay
	return cmd, nil
}

// failed is err, when the child of c failed, as a *nativeCommandError
// with the last lines the child wrote on stderr.
func failed(c nativeCommand, cmd *exec.Cmd, err error) error {
	if err == nil {
		return nil
	}
	var tail *stderrTail // nil (nothing kept) for a child that is not command's
	tail, _ = cmd.Stderr.(*stderrTail)
	return &nativeCommandError{Command: c.String(), Err: err, Stderr: tail.kept()}
}

// output runs a short command and returns its standard output. A non-zero
// exit is returned as a *nativeCommandError wrapping an *exec.ExitError,
// with the output read so far.
func (r *nativeRunner) output(ctx context.Context, c nativeCommand) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, nativeCommandTimeout)
	defer cancel()
	cmd, err := r.command(ctx, c)
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	out, readErr := io.ReadAll(io.LimitReader(stdout, maxNativeOutput+1))
	over := len(out) > maxNativeOutput
	if over {
		cancel() // ends the child, which may be writing still
	}
	err = cmd.Wait()
	endProcessGroup(cmd)
	if over {
		return nil, fmt.Errorf("%s: %w (%d bytes)", c, errNativeOutput, maxNativeOutput)
	}
	if err == nil {
		err = readErr
	}
	return out, failed(c, cmd, err)
}

// stream runs a long command, handing each line of its output (without
// the newline, cut at maxNativeLine) to line, until it exits or ctx ends.
// line must not keep the slice.
func (r *nativeRunner) stream(ctx context.Context, c nativeCommand, line func([]byte)) error {
	cmd, err := r.command(ctx, c)
	if err != nil {
		return err
	}
	// The output is copied by exec into a pipe that is closed once the
	// child has ended (or nativeWaitDelay after, should a process it
	// started hold its output open): the read never outlives the child.
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		pw.Close()
		return err
	}
	readDone := make(chan error, 1)
	go func() {
		err := r.readLines(pr, line)
		pr.CloseWithError(err) // a reader that stopped early unblocks the copy
		readDone <- err
	}()
	err = cmd.Wait()
	endProcessGroup(cmd)
	pw.Close()
	readErr := <-readDone
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err == nil {
		err = readErr
	}
	return failed(c, cmd, err)
}

func (r *nativeRunner) readLines(src io.Reader, line func([]byte)) error {
	lr := newLineReader(src, maxNativeLine, cutLongLines)
	for {
		b, err := lr.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if lr.cut {
			r.cutLines.Add(1)
		}
		line(b)
	}
}

// keepStreaming runs c with stream until ctx ends, starting it again after
// each end with a backoff; ended is told why each run ended.
func (r *nativeRunner) keepStreaming(ctx context.Context, c nativeCommand, line func([]byte), ended func(error)) {
	retry := newBackoff(r.minBackoff, r.maxBackoff)
	for {
		start := time.Now()
		err := r.stream(ctx, c, line)
		if ctx.Err() != nil {
			return
		}
		ended(err)
		if time.Since(start) >= nativeQuickExit {
			retry.reset()
		}
		if !sleepCtx(ctx, retry.next()) {
			return
		}
	}
}
