package accounts

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestSQLiteAcrossProcesses is what happens in the embedded deployment: the
// auth and meter plugins and the accounts CLI open one file from separate
// processes. Three processes share 60 attempts on 20 credits.
func TestSQLiteAcrossProcesses(t *testing.T) {
	if os.Getenv("ACCOUNTS_HELPER_DB") != "" {
		t.Skip("running as a helper")
	}
	b := backends[0]
	dsn := b.newDB(t)
	s := open(t, b, dsn)
	a := must[Account](t)(s.CreateAccount(t.Context(), "free", ptr[int64](20)))

	const procs, attempts = 3, 20
	var starts []io.WriteCloser
	var outs []*bufio.Reader
	var cmds []*exec.Cmd
	for range procs {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestSQLiteHelperProcess$")
		cmd.Env = append(os.Environ(), "ACCOUNTS_HELPER_DB="+dsn, "ACCOUNTS_HELPER_USER="+a.ID,
			"ACCOUNTS_HELPER_ATTEMPTS="+strconv.Itoa(attempts))
		cmd.Stderr = os.Stderr
		stdin := must[io.WriteCloser](t)(cmd.StdinPipe())
		stdout := must[io.ReadCloser](t)(cmd.StdoutPipe())
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, starts, outs = append(cmds, cmd), append(starts, stdin), append(outs, bufio.NewReader(stdout))
	}
	// Every helper has its store open before any of them starts reserving.
	for _, out := range outs {
		if _, err := lineWith(out, "ready"); err != nil {
			t.Fatalf("helper: %v", err)
		}
	}
	for _, w := range starts {
		w.Close()
	}
	ok, forbidden := 0, 0
	for i, out := range outs {
		line, err := lineWith(out, "ok=")
		if err != nil {
			t.Fatalf("helper %d: %v", i, err)
		}
		var o, f int
		if _, err := fmt.Sscanf(line, "ok=%d forbidden=%d", &o, &f); err != nil {
			t.Fatalf("helper %d said %q: %v", i, line, err)
		}
		ok, forbidden = ok+o, forbidden+f
		if err := cmds[i].Wait(); err != nil {
			t.Errorf("helper %d: %v", i, err)
		}
	}
	if ok != 20 || forbidden != procs*attempts-20 {
		t.Errorf("%d reserved, %d refused across %d processes; want exactly 20 and %d", ok, forbidden, procs, procs*attempts-20)
	}
	checkLedger(t, s, a.ID)
}

// TestSQLiteHelperProcess is one process of TestSQLiteAcrossProcesses.
func TestSQLiteHelperProcess(t *testing.T) {
	dsn := os.Getenv("ACCOUNTS_HELPER_DB")
	if dsn == "" {
		t.Skip("only runs as a helper of TestSQLiteAcrossProcesses")
	}
	attempts, _ := strconv.Atoi(os.Getenv("ACCOUNTS_HELPER_ATTEMPTS"))
	s := open(t, backends[0], dsn)
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin) // the parent closes stdin to start us all at once
	ok, forbidden := burst(t, []Store{s}, os.Getenv("ACCOUNTS_HELPER_USER"), attempts)
	fmt.Printf("ok=%d forbidden=%d\n", ok, forbidden)
}

// lineWith reads up to the first line that starts with prefix.
func lineWith(r *bufio.Reader, prefix string) (string, error) {
	for {
		line, err := r.ReadString('\n')
		if strings.HasPrefix(line, prefix) {
			return strings.TrimSpace(line), nil
		}
		if err != nil {
			return "", fmt.Errorf("no line starting %q: %w", prefix, err)
		}
	}
}
