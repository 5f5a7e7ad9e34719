package s3test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// Module is what Binary builds when no versitygw is found. It is pinned so
// that a new upstream release cannot change the tests' server unseen.
const Module = "github.com/versity/versitygw/cmd/versitygw@v1.8.0"

// ErrUnavailable marks the reasons a test skips rather than fails: no binary
// and no way to build one.
var ErrUnavailable = errors.New("no versitygw S3 server available")

// Binary returns the path of a versitygw executable, building it when
// none is found and building is allowed.
func Binary() (string, error) {
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	for _, dir := range goBinDirs() {
		if p := filepath.Join(dir, "versitygw"); isExecutable(p) {
			return p, nil
		}
	}
	cache, err := cacheDir()
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	p := filepath.Join(cache, "versitygw")
	if isExecutable(p) {
		return p, nil
	}
	if os.Getenv("MDPRESS_NO_S3_BUILD") == "1" {
		return "", fmt.Errorf("%w: not on PATH, in $GOPATH/bin or %s, and MDPRESS_NO_S3_BUILD=1 forbids building it", ErrUnavailable, cache)
	}
	if err := build(cache); err != nil {
		return "", fmt.Errorf("%w: building %s: %v", ErrUnavailable, Module, err)
	}
	return p, nil
}

func goBinDirs() []string {
	var dirs []string
	if gobin := os.Getenv("GOBIN"); gobin != "" {
		dirs = append(dirs, gobin)
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		if home, err := os.UserHomeDir(); err == nil {
			gopath = filepath.Join(home, "go")
		}
	}
	for _, p := range filepath.SplitList(gopath) {
		if p != "" {
			dirs = append(dirs, filepath.Join(p, "bin"))
		}
	}
	return dirs
}

// cacheDir is .cache/bin at the repository root (the directory holding
// go.work), or the user cache when the tests run outside the repository.
func cacheDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return filepath.Join(dir, ".cache", "bin"), nil
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	uc, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(uc, "mdpress", "bin"), nil
}

// build installs versitygw into dir. A file lock makes concurrent test
// binaries (go test runs packages in parallel) wait for one build.
func build(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".versitygw.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if isExecutable(filepath.Join(dir, "versitygw")) {
		return nil // another process built it while we waited
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "s3test: building %s into %s (about 2 minutes, once per machine)\n", Module, dir)
	cmd := exec.Command(goTool, "install", Module)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
