//go:build ignore

// Command archive writes a release archive for npm/build.sh: a .tar.gz, or a
// .zip when the name ends so (the archive people on Windows open), with the
// same bytes on every machine: fixed owner, modes and times, so that
// SHA256SUMS depends only on the files. Go is all it needs, which every
// machine building a release has, unlike zip.
//
//	go run npm/archive.go OUT.tar.gz|OUT.zip NAME=PATH...
//
// Each NAME=PATH puts the file at PATH into the archive as NAME; a file
// executable by its owner is stored executable (0755), any other 0644. The
// time of every entry is SOURCE_DATE_EPOCH (seconds), else 1980-01-01.
package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: go run npm/archive.go OUT.tar.gz|OUT.zip NAME=PATH...")
		os.Exit(2)
	}
	if err := write(os.Args[1], os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "archive:", err)
		os.Exit(1)
	}
}

type entry struct {
	name, path string
	mode       int64
	size       int64
}

func write(out string, specs []string) (err error) {
	when := time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH %q: %v", s, err)
		}
		when = time.Unix(sec, 0).UTC()
	}
	var entries []entry
	for _, spec := range specs {
		name, path, ok := strings.Cut(spec, "=")
		if !ok || name == "" || path == "" {
			return fmt.Errorf("%q is not NAME=PATH", spec)
		}
		fi, err := os.Stat(path)
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", path)
		}
		mode := int64(0o644)
		if fi.Mode().Perm()&0o100 != 0 {
			mode = 0o755
		}
		entries = append(entries, entry{name, path, mode, fi.Size()})
	}

	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(out)
		}
	}()
	switch {
	case strings.HasSuffix(out, ".zip"):
		return writeZip(f, entries, when)
	case strings.HasSuffix(out, ".tar.gz"):
		return writeTarGz(f, entries, when)
	}
	return fmt.Errorf("%s: the name must end in .tar.gz or .zip", out)
}

func writeZip(w io.Writer, entries []entry, when time.Time) error {
	zw := zip.NewWriter(w)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: when}
		h.SetMode(os.FileMode(e.mode))
		fw, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if err := copyFile(fw, e.path); err != nil {
			return err
		}
	}
	return zw.Close()
}

func writeTarGz(w io.Writer, entries []entry, when time.Time) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: e.mode, Size: e.size, ModTime: when,
			Uname: "root", Gname: "root", Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if err := copyFile(tw, e.path); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func copyFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}
