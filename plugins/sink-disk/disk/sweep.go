package disk

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mdpress/mdpress/core/fileid"
)

// orphanAge is how old a temp file or a data file without a record must be
// before the sweeper takes it for the remains of a crash rather than a
// Store in progress.
const orphanAge = time.Hour

// sweepLoop sweeps once at start, which clears what a crash left behind,
// then every interval until ctx ends.
func (d *Disk) sweepLoop(ctx context.Context, st *state) {
	defer close(st.done)
	t := time.NewTicker(st.cfg.SweepInterval)
	defer t.Stop()
	for {
		n, err := d.sweep(ctx, st.root)
		if err != nil && ctx.Err() == nil {
			d.log.Warn("sweep hosted files", "err", err, "removed", n)
		} else if n > 0 {
			d.log.Info("swept hosted files", "removed", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sweep removes expired files, and temp and data files a crash left behind,
// and returns how many files it removed.
func (d *Disk) Sweep(ctx context.Context) (int, error) {
	st := d.cur.Load()
	if st == nil {
		return 0, errors.New("sink-disk is not configured")
	}
	return d.sweep(ctx, st.root)
}

func (d *Disk) sweep(ctx context.Context, root *os.Root) (int, error) {
	removed := 0
	var errs []error
	for _, a := range hexDirs(root, ".") {
		for _, b := range hexDirs(root, a) {
			if err := ctx.Err(); err != nil {
				return removed, err
			}
			n, err := d.sweepDir(root, filepath.Join(a, b))
			removed += n
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	return removed, errors.Join(errs...)
}

// hexDirs lists the fan-out subdirectories of dir, ignoring anything else
// an operator may have put there.
func hexDirs(root *os.Root, dir string) []string {
	entries, err := fs.ReadDir(root.FS(), filepath.ToSlash(dir))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && len(e.Name()) == 2 && validHex(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

func validHex(s string) bool {
	for i := range len(s) {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// sweepDir handles one leaf directory. A record goes before its data, the
// reverse of Store, so a file stops being served before its bytes go.
func (d *Disk) sweepDir(root *os.Root, dir string) (int, error) {
	entries, err := fs.ReadDir(root.FS(), filepath.ToSlash(dir))
	if err != nil {
		return 0, err
	}
	now := d.now()
	hasMeta := map[string]bool{}
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), metaExt); ok && fileid.Valid(id) {
			hasMeta[id] = true
		}
	}
	removed := 0
	var errs []error
	remove := func(name string) {
		err := root.Remove(filepath.Join(dir, name))
		if err == nil {
			removed++
		} else if !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, tmpPrefix):
			if olderThan(e, now, orphanAge) {
				remove(name)
			}
		case strings.HasSuffix(name, metaExt) && hasMeta[strings.TrimSuffix(name, metaExt)]:
			id := strings.TrimSuffix(name, metaExt)
			m, err := readMeta(root, filepath.Join(dir, name), id)
			if err != nil {
				// A record is written atomically, so a bad one is damage to
				// look at, not debris to clear.
				d.log.Warn("unreadable metadata record", "id", id, "err", err)
				continue
			}
			if !now.Before(m.Expires) {
				remove(name)
				remove(id + dataExt)
			}
		case strings.HasSuffix(name, dataExt):
			id := strings.TrimSuffix(name, dataExt)
			if fileid.Valid(id) && !hasMeta[id] && olderThan(e, now, orphanAge) {
				remove(name)
			}
		}
	}
	return removed, errors.Join(errs...)
}

func olderThan(e fs.DirEntry, now time.Time, age time.Duration) bool {
	fi, err := e.Info()
	return err == nil && now.Sub(fi.ModTime()) > age
}
