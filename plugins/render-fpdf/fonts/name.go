package fonts

import "encoding/binary"

// windowsNames returns the name table with only its Windows-platform
// records. DejaVu stores every string twice, in Mac Roman and in UTF-16;
// the licence text alone is 14 KB of the two. fpdf copies the table into
// every font it embeds and deflates it per document, and no reader draws
// from it, so one copy of each string (every notice included) is enough.
// A table it cannot read, or one without Windows records, is kept whole.
func windowsNames(name []byte) []byte {
	be := binary.BigEndian
	if len(name) < 6 || be.Uint16(name) != 0 {
		return name
	}
	count, storage := int(be.Uint16(name[2:])), int(be.Uint16(name[4:]))
	if 6+12*count > len(name) || storage > len(name) {
		return name
	}
	type record struct {
		head []byte // platform, encoding, language, name id
		text []byte
	}
	var keep []record
	size := 0
	for i := range count {
		rec := name[6+12*i : 18+12*i]
		n, off := int(be.Uint16(rec[8:])), storage+int(be.Uint16(rec[10:]))
		if be.Uint16(rec) != 3 {
			continue
		}
		if off+n > len(name) {
			return name
		}
		keep = append(keep, record{rec[:8], name[off : off+n]})
		size += n
	}
	if len(keep) == 0 {
		return name
	}
	out := make([]byte, 6+12*len(keep), 6+12*len(keep)+size)
	be.PutUint16(out[2:], uint16(len(keep)))
	be.PutUint16(out[4:], uint16(len(out)))
	for i, r := range keep {
		rec := out[6+12*i:]
		copy(rec, r.head)
		be.PutUint16(rec[8:], uint16(len(r.text)))
		be.PutUint16(rec[10:], uint16(len(out)-(6+12*len(keep))))
		out = append(out, r.text...)
	}
	return out
}
