package disk

import "path/filepath"

// fanout returns the directory of id relative to the root: two levels of
// two hex digits each.
func fanout(id string) string {
	return filepath.Join(id[0:2], id[2:4])
}
