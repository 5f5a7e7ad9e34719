package disk

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/mdpress/mdpress/core/fileid"
)

// File name parts. tmpPrefix starts with a dot so a temp file can never be
// taken for an id.
const (
	dataExt   = ".pdf"
	metaExt   = ".json"
	tmpPrefix = ".tmp-"
	// maxMetaBytes bounds what Open reads of a record; real ones are < 1 KiB.
	maxMetaBytes = 64 << 10
)

// meta is the record written beside each PDF.
type meta struct {
	ID       string    `json:"id"`
	Owner    string    `json:"owner"`
	Filename string    `json:"filename"`
	Size     int64     `json:"size"`
	SHA256   string    `json:"sha256"`
	Created  time.Time `json:"created"`
	Expires  time.Time `json:"expires"`
}

func dataPath(id string) string { return filepath.Join(fanout(id), id+dataExt) }
func metaPath(id string) string { return filepath.Join(fanout(id), id+metaExt) }

// readMeta reads and checks the record at name.
func readMeta(root *os.Root, name, id string) (meta, error) {
	var m meta
	f, err := root.Open(name)
	if err != nil {
		return m, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxMetaBytes+1))
	if err != nil {
		return m, err
	}
	if len(b) > maxMetaBytes {
		return m, fmt.Errorf("metadata %s: over %d bytes", name, maxMetaBytes)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("metadata %s: %w", name, err)
	}
	if m.ID != id || m.Size < 0 {
		return m, fmt.Errorf("metadata %s: does not describe %s", name, id)
	}
	return m, nil
}

// writeAtomic makes dir/name hold exactly data or not exist at all: the data
// goes to a temp file in the same directory, is fsynced, renamed over name,
// and the directory is fsynced so the rename itself survives a crash.
func writeAtomic(root *os.Root, dir, name string, data []byte) (err error) {
	tmp := filepath.Join(dir, tmpPrefix+fileid.New()[:16])
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = root.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err = f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = root.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	return syncDir(root, dir)
}

func syncDir(root *os.Root, dir string) error {
	d, err := root.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
