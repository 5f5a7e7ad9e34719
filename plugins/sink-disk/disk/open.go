package disk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/mdpress/mdpress/core/fileid"
	"github.com/mdpress/mdpress/sdk/stage"
)

// Open serves a hosted file or a byte range of it. The body is a section of
// the open file, so nothing is read into memory ahead of the caller.
func (d *Disk) Open(ctx context.Context, req *stage.OpenRequest) (*stage.OpenResponse, error) {
	// The id is checked before anything touches the directory.
	if !fileid.Valid(req.ID) {
		return nil, notFound()
	}
	if req.Offset < 0 || req.Length < -1 {
		return nil, stage.Errorf(stage.CodeInvalid, "invalid byte range")
	}
	st := d.cur.Load()
	if st == nil {
		return nil, stage.Errorf(stage.CodeUnavailable, "sink-disk is not configured")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m, err := readMeta(st.root, metaPath(req.ID), req.ID)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, notFound()
	}
	if err != nil {
		return nil, stage.Wrap(stage.CodeInternal, err, "open file")
	}
	if !d.now().Before(m.Expires) {
		return nil, stage.Errorf(stage.CodeGone, "file expired")
	}
	f, err := st.root.Open(dataPath(req.ID))
	if errors.Is(err, fs.ErrNotExist) {
		d.log.WarnContext(ctx, "metadata without data file", "id", req.ID)
		return nil, notFound()
	}
	if err != nil {
		return nil, stage.Wrap(stage.CodeInternal, err, "open file")
	}
	body, err := section(f, m.Size, req.Offset, req.Length)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &stage.OpenResponse{
		Size:      m.Size,
		Filename:  m.Filename,
		ETag:      `"` + m.SHA256 + `"`,
		Created:   m.Created,
		ExpiresAt: m.Expires,
		Body:      body,
	}, nil
}

func notFound() error { return stage.Errorf(stage.CodeNotFound, "file not found") }

// section returns a reader of length bytes of f from offset (-1: to the
// end), clamped to the file, after checking f is the size its record says.
func section(f *os.File, size, offset, length int64) (io.ReadCloser, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, stage.Wrap(stage.CodeInternal, err, "open file")
	}
	if fi.Size() != size {
		return nil, stage.Wrap(stage.CodeInternal, fmt.Errorf("%s: %d bytes, metadata says %d", f.Name(), fi.Size(), size), "open file")
	}
	if offset > size {
		return nil, stage.Errorf(stage.CodeInvalid, "byte range starts past the end of the file")
	}
	if length < 0 || length > size-offset {
		length = size - offset
	}
	return sectionFile{io.NewSectionReader(f, offset, length), f}, nil
}

// sectionFile reads a section of a file and closes the file.
type sectionFile struct {
	*io.SectionReader
	f *os.File
}

func (s sectionFile) Close() error { return s.f.Close() }
