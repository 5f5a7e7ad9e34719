package disk

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mdpress/mdpress/core/fileid"
	"github.com/mdpress/mdpress/sdk/stage"
)

// Version is reported in the plugin's Info.
const Version = "0.1.0"

// Disk is the sink that keeps hosted PDFs in a local directory.
type Disk struct {
	log *slog.Logger
	now func() time.Time

	mu  sync.Mutex // serialises Configure and Close
	cur atomic.Pointer[state]
}

// state is what one successful Configure set up.
type state struct {
	cfg  Config
	root *os.Root
	stop context.CancelFunc
	done chan struct{} // closed when the sweeper has returned
}

// Option changes a Disk built by New.
type Option func(*Disk)

// WithClock replaces time.Now, for tests of expiry.
func WithClock(now func() time.Time) Option {
	return func(d *Disk) { d.now = now }
}

// New returns an unconfigured Disk. It does no I/O.
func New(log *slog.Logger, opts ...Option) *Disk {
	d := &Disk{log: log, now: time.Now}
	for _, o := range opts {
		o(d)
	}
	return d
}

// Configure opens (creating if needed) the directory and starts the sweeper.
// A second Configure replaces the first.
func (d *Disk) Configure(ctx context.Context, req *stage.ConfigureRequest) (*stage.ConfigureResponse, error) {
	cfg, err := parseConfig(req.Config, req.DataDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Dir, 0o750); err != nil {
		return nil, stage.Wrap(stage.CodeInvalid, err, "sink-disk config: dir: cannot create the directory")
	}
	root, err := os.OpenRoot(cfg.Dir)
	if err != nil {
		return nil, stage.Wrap(stage.CodeInvalid, err, "sink-disk config: dir: cannot open the directory")
	}
	sweepCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	st := &state{cfg: cfg, root: root, stop: stop, done: make(chan struct{})}

	d.mu.Lock()
	defer d.mu.Unlock()
	d.shutdown(d.cur.Swap(st))
	go d.sweepLoop(sweepCtx, st)
	d.log.Info("sink-disk configured", "dir", cfg.Dir, "sweepInterval", cfg.SweepInterval.String())
	return &stage.ConfigureResponse{Info: stage.Info{Name: "sink-disk", Version: Version}}, nil
}

// Health checks that the directory is still there.
func (d *Disk) Health(context.Context) error {
	st := d.cur.Load()
	if st == nil {
		return stage.Errorf(stage.CodeUnavailable, "sink-disk is not configured")
	}
	if _, err := st.root.Stat("."); err != nil {
		return stage.Wrap(stage.CodeUnavailable, err, "hosted-file directory unavailable")
	}
	return nil
}

// Close stops the sweeper and releases the directory. It is safe to call
// twice and before Configure.
func (d *Disk) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.shutdown(d.cur.Swap(nil))
	return nil
}

func (d *Disk) shutdown(st *state) {
	if st == nil {
		return
	}
	st.stop()
	<-st.done
	_ = st.root.Close()
}

// Store writes the PDF, then its metadata record (the commit point).
func (d *Disk) Store(ctx context.Context, req *stage.StoreRequest) (*stage.StoreResponse, error) {
	st := d.cur.Load()
	if st == nil {
		return nil, stage.Errorf(stage.CodeUnavailable, "sink-disk is not configured")
	}
	if len(req.PDF) == 0 {
		return nil, stage.Errorf(stage.CodeInvalid, "no PDF to store")
	}
	if req.TTL <= 0 {
		return nil, stage.Errorf(stage.CodeInvalid, "retention must be positive")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	id := fileid.New()
	sum := sha256.Sum256(req.PDF)
	now := d.now().UTC()
	m := meta{
		ID:       id,
		Owner:    req.Owner,
		Filename: req.Filename,
		Size:     int64(len(req.PDF)),
		SHA256:   hex.EncodeToString(sum[:]),
		Created:  now,
		Expires:  now.Add(req.TTL),
	}
	record, err := json.Marshal(m)
	if err != nil {
		return nil, stage.Wrap(stage.CodeInternal, err, "store file")
	}
	dir := fanout(id)
	if err := makeDir(st.root, dir); err != nil {
		return nil, stage.Wrap(stage.CodeInternal, err, "store file")
	}
	if err := writeAtomic(st.root, dir, id+dataExt, req.PDF); err != nil {
		return nil, stage.Wrap(stage.CodeInternal, fmt.Errorf("write data: %w", err), "store file")
	}
	if err := writeAtomic(st.root, dir, id+metaExt, record); err != nil {
		_ = st.root.Remove(dataPath(id))
		return nil, stage.Wrap(stage.CodeInternal, fmt.Errorf("write metadata: %w", err), "store file")
	}
	if err := ctx.Err(); err != nil {
		// The caller gave up during the writes (the sink timeout, the
		// client gone) and has refunded the request: no one gets this id,
		// and the file would take up room until it expired, days away.
		_ = remove(st.root, id)
		return nil, err
	}
	return &stage.StoreResponse{ID: id, ExpiresAt: m.Expires}, nil
}

// makeDir creates the fan-out directory dir ("ab/cd") and, when it is new,
// fsyncs its parents so the new entries survive a crash with the files.
func makeDir(root *os.Root, dir string) error {
	if _, err := root.Stat(dir); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := root.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	if err := syncDir(root, filepath.Dir(dir)); err != nil {
		return err
	}
	return syncDir(root, ".")
}

var (
	_ stage.Plugin = (*Disk)(nil)
	_ stage.Sink   = (*Disk)(nil)
)
