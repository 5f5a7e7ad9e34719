package s3test

import "syscall"

// procAttr gives the server its own process group and kills it when the
// test binary dies, so a crashed or killed test leaves no server behind.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
