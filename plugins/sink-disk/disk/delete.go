package disk

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"github.com/mdpress/mdpress/core/fileid"
	"github.com/mdpress/mdpress/sdk/stage"
)

var _ stage.Deleter = (*Disk)(nil)

// Delete removes a file the host stored for a request that then failed.
// The record goes first: without it Open answers 404, whatever becomes of
// the data, which the sweeper removes as debris if this stops halfway.
func (d *Disk) Delete(ctx context.Context, req *stage.DeleteRequest) error {
	if !fileid.Valid(req.ID) {
		return stage.Errorf(stage.CodeInvalid, "invalid file id")
	}
	st := d.cur.Load()
	if st == nil {
		return stage.Errorf(stage.CodeUnavailable, "sink-disk is not configured")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := remove(st.root, req.ID); err != nil {
		return stage.Wrap(stage.CodeInternal, err, "delete file")
	}
	return nil
}

// remove removes a file's record, then its data; either may be gone.
func remove(root *os.Root, id string) error {
	for _, name := range []string{metaPath(id), dataPath(id)} {
		if err := root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
