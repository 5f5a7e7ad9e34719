//go:build unix

package emoji

import (
	"fmt"
	"os"
	"syscall"
)

// Open maps the font file into memory and parses it. Mapped, its ~11 MB
// are page cache shared with every process that reads the file, not Go
// heap: held on the heap they raised the collector's target, and the peak
// heap of every render, by twice their size. The mapping lives as long as
// the process.
func Open(path string) (*Font, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() <= 0 || st.Size() > 1<<30 {
		return nil, fmt.Errorf("%s: %d bytes", path, st.Size())
	}
	data, err := syscall.Mmap(int(file.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", path, err)
	}
	f, err := Parse(data)
	if err != nil {
		_ = syscall.Munmap(data)
		return nil, err
	}
	return f, nil
}
