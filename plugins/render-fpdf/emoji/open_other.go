//go:build !unix

package emoji

import "os"

// Open reads the font file and parses it.
func Open(path string) (*Font, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}
