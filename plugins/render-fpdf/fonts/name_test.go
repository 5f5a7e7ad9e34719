package fonts

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"
)

// nameRecords lists a name table's records as "platform/encoding/language/
// id" -> string bytes.
func nameRecords(t *testing.T, name []byte) map[string][]byte {
	t.Helper()
	be := binary.BigEndian
	count, storage := int(be.Uint16(name[2:])), int(be.Uint16(name[4:]))
	out := map[string][]byte{}
	for i := range count {
		rec := name[6+12*i:]
		key := fmt.Sprintf("%d/%d/%#x/%d", be.Uint16(rec), be.Uint16(rec[2:]), be.Uint16(rec[4:]), be.Uint16(rec[6:]))
		off := storage + int(be.Uint16(rec[10:]))
		out[key] = name[off : off+int(be.Uint16(rec[8:]))]
	}
	return out
}

// TestWindowsNames checks that the embedded copies keep every Windows
// string of the name table, the copyright and licence notices among them,
// and drop only the Mac Roman duplicates.
func TestWindowsNames(t *testing.T) {
	set := loadSet(t)
	for id := ID(0); id < Count; id++ {
		data, err := File(id)
		if err != nil {
			t.Fatal(err)
		}
		dir, err := readDirectory(data)
		if err != nil {
			t.Fatal(err)
		}
		full := nameRecords(t, dir["name"])
		sub, err := readDirectory(set.Face(id).Subset(runesOf(sample)))
		if err != nil {
			t.Fatal(err)
		}
		got := nameRecords(t, sub["name"])
		windows := 0
		for key, text := range full {
			if key[0] != '3' {
				if _, ok := got[key]; ok {
					t.Errorf("%s: record %s kept", fileNames[id], key)
				}
				continue
			}
			windows++
			if !bytes.Equal(got[key], text) {
				t.Errorf("%s: record %s is %q, want %q", fileNames[id], key, got[key], text)
			}
		}
		for _, notice := range []string{"3/1/0x409/0", "3/1/0x409/13", "3/1/0x409/14"} {
			if len(got[notice]) < 20 {
				t.Errorf("%s: notice %s missing", fileNames[id], notice)
			}
		}
		if len(got) != windows || len(sub["name"]) >= len(dir["name"])*3/4 {
			t.Errorf("%s: %d records of %d bytes, from %d of %d", fileNames[id], len(got), len(sub["name"]), len(full), len(dir["name"]))
		}
	}
	for _, bad := range [][]byte{nil, {0, 1, 0, 0, 0, 6}, {0, 0, 0, 9, 0, 6}} {
		if got := windowsNames(bad); !bytes.Equal(got, bad) {
			t.Errorf("unreadable table %v became %v", bad, got)
		}
	}
}
