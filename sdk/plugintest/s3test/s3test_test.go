package s3test

import (
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Run(m)) }

func TestStartAnswersS3(t *testing.T) {
	endpoint, key, secret := Start(t)
	if key == "" || secret == "" || !strings.HasPrefix(endpoint, "http://127.0.0.1:") {
		t.Fatalf("endpoint %q key %q secret %q", endpoint, key, secret)
	}
	// An unsigned request must be refused the S3 way, which shows it is an
	// S3 server that checks signatures and not just any listener.
	resp, err := http.Get(endpoint + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "<Error>") {
		t.Fatalf("unsigned GET: %d %s", resp.StatusCode, body)
	}
}

func TestSharedIsOnePerBinary(t *testing.T) {
	a, _, _ := Shared(t)
	b, _, _ := Shared(t)
	if a != b {
		t.Fatalf("two shared servers: %s and %s", a, b)
	}
}

func TestCloseStopsServer(t *testing.T) {
	s, err := Launch("")
	if err != nil {
		skipOrFail(t, err)
	}
	dir := s.dir
	s.Close()
	s.Close()
	if _, err := http.Get(s.Endpoint + "/"); err == nil {
		t.Fatal("server still answers after Close")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("temp dir %s left behind (%v)", dir, err)
	}
}

func TestBucketNames(t *testing.T) {
	valid := regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$`)
	seen := map[string]bool{}
	for _, name := range []string{"Simple", "With Spaces/And_Sub.Tests", strings.Repeat("VeryLong", 20)} {
		t.Run(name, func(t *testing.T) {
			b := Bucket(t)
			if !valid.MatchString(b) || strings.Contains(b, "--") {
				t.Fatalf("bucket %q is not a valid S3 name", b)
			}
			if seen[b] {
				t.Fatalf("bucket %q handed out twice", b)
			}
			seen[b] = true
		})
	}
}

func TestBinaryLookup(t *testing.T) {
	t.Run("no binary and no build skips with the reason", func(t *testing.T) {
		t.Setenv("PATH", "")
		t.Setenv("GOBIN", "")
		t.Setenv("GOPATH", t.TempDir())
		t.Setenv("XDG_CACHE_HOME", t.TempDir())
		t.Setenv("MDPRESS_NO_S3_BUILD", "1")
		t.Chdir(t.TempDir()) // outside the repository: no .cache/bin
		_, err := Binary()
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "MDPRESS_NO_S3_BUILD") {
			t.Fatalf("err = %v, want ErrUnavailable naming MDPRESS_NO_S3_BUILD", err)
		}
	})
	t.Run("found in GOPATH/bin", func(t *testing.T) {
		gopath := t.TempDir()
		fake := filepath.Join(gopath, "bin", "versitygw")
		if err := os.MkdirAll(filepath.Dir(fake), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", "")
		t.Setenv("GOBIN", "")
		t.Setenv("GOPATH", gopath)
		if got, err := Binary(); err != nil || got != fake {
			t.Fatalf("Binary() = %q, %v; want %s", got, err, fake)
		}
	})
}
