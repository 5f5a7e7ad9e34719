package fonts

import (
	"reflect"
	"strings"
	"unsafe"

	"github.com/go-pdf/fpdf"
)

// Embed adds face id to pdf under the face's name, as a compact copy
// holding only what the runes in used need (Face.Subset). The document must
// draw no rune of the face outside used (fpdf would panic writing it).
//
// When fpdf's internals are the ones this package was written against
// (go-pdf/fpdf v0.9.0), the font definition fpdf builds when it parses a
// font is made once per process and copied into each document, with the
// per-document parts (widths, used runes, the file to subset) replaced:
// fpdf then skips parsing altogether and hashing a 64 Ki-entry width table
// to name the font. Otherwise the per-document font goes through fpdf's
// public AddUTF8FontFromBytes, which gives the same PDF more slowly.
func (s *Set) Embed(pdf *fpdf.Fpdf, id ID, used *Runes) {
	face := s.faces[id]
	data := face.Subset(used)
	if s.inject != nil && s.inject.add(pdf, id, face, used, data) {
		return
	}
	pdf.AddUTF8FontFromBytes(face.Name, "", data)
}

// Injecting reports whether Embed copies prepared font definitions into
// documents rather than having fpdf parse every font.
func (s *Set) Injecting() bool { return s.inject != nil }

// injector copies prepared fpdf font definitions into documents. It reaches
// into unexported fields by reflection, so it checks every field it uses
// when it is built and is not used at all when one is missing or of
// another type.
type injector struct {
	fonts  []int // field path of Fpdf.fonts, map[string]fontDefType
	cw     []int // fontDefType.Cw []int
	file   []int // fontDefType.utf8File *utf8FontFile
	runes  []int // fontDefType.usedRunes map[int]int
	reader []int // utf8FontFile.fileReader *fileReader
	array  []int // fileReader.array []byte

	defType, fileType, readerType reflect.Type
	keys                          [Count]string
	protos                        [Count]reflect.Value
}

// subsetRange is how many low runes fpdf marks used in every UTF-8 font
// (makeSubsetRange(57) when no page-count alias is set, as here).
const subsetRange = 57

func newInjector(faces *[Count]*Face) *injector {
	in := &injector{}
	pdfType := reflect.TypeFor[fpdf.Fpdf]()
	fontsField, ok := pdfType.FieldByName("fonts")
	if !ok || fontsField.Type.Kind() != reflect.Map || fontsField.Type.Key().Kind() != reflect.String ||
		fontsField.Type.Elem().Kind() != reflect.Struct {
		return nil
	}
	in.fonts = fontsField.Index
	in.defType = fontsField.Type.Elem()
	field := func(t reflect.Type, name string, want reflect.Kind) ([]int, reflect.Type) {
		f, ok := t.FieldByName(name)
		if !ok || f.Type.Kind() != want {
			return nil, nil
		}
		return f.Index, f.Type
	}
	var cwType, fileType, runesType, readerType, arrayType reflect.Type
	in.cw, cwType = field(in.defType, "Cw", reflect.Slice)
	in.file, fileType = field(in.defType, "utf8File", reflect.Pointer)
	in.runes, runesType = field(in.defType, "usedRunes", reflect.Map)
	if in.cw == nil || in.file == nil || in.runes == nil || cwType.Elem().Kind() != reflect.Int ||
		runesType != reflect.TypeFor[map[int]int]() || fileType.Elem().Kind() != reflect.Struct {
		return nil
	}
	in.fileType = fileType.Elem()
	in.reader, readerType = field(in.fileType, "fileReader", reflect.Pointer)
	if in.reader == nil || readerType.Elem().Kind() != reflect.Struct {
		return nil
	}
	in.readerType = readerType.Elem()
	in.array, arrayType = field(in.readerType, "array", reflect.Slice)
	if in.array == nil || arrayType.Elem().Kind() != reflect.Uint8 {
		return nil
	}
	// Let fpdf build each definition once, from a copy whose cmap is empty:
	// what stays (descriptor, underline metrics, id) does not depend on it.
	for id, face := range faces {
		scratch := fpdf.New("P", "pt", "A4", "")
		scratch.AddUTF8FontFromBytes(face.Name, "", face.Subset(&Runes{}))
		if scratch.Err() {
			return nil
		}
		m := in.at(reflect.ValueOf(scratch).Elem(), in.fonts)
		if m.Len() != 1 {
			return nil
		}
		key := m.MapKeys()[0]
		proto := reflect.New(in.defType).Elem()
		proto.Set(m.MapIndex(key))
		in.keys[id], in.protos[id] = key.String(), proto
	}
	return in
}

// at returns the field at path of v, made settable.
func (in *injector) at(v reflect.Value, path []int) reflect.Value {
	f := v.FieldByIndex(path)
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}

// add puts a copy of the face's definition into pdf with this document's
// widths, used runes and font file, exactly as fpdf's parse of data would
// have made them. It reports false when it cannot.
func (in *injector) add(pdf *fpdf.Fpdf, id ID, face *Face, used *Runes, data []byte) bool {
	if pdf.Err() || !strings.EqualFold(in.keys[id], face.Name) {
		return false
	}
	fontMap := in.at(reflect.ValueOf(pdf).Elem(), in.fonts)
	key := reflect.ValueOf(in.keys[id])
	if fontMap.MapIndex(key).IsValid() {
		return true
	}
	def := reflect.New(in.defType).Elem()
	def.Set(in.protos[id])

	// Widths by rune, as fpdf's hmtx parse records them: zero-width glyphs
	// as 65535, the count of runes in slot 0. fpdf's parse makes the table
	// 64 Ki entries long; when it writes the font it reads entries up to
	// the highest rune drawn, and as nothing outside used is drawn, a table
	// ending there is enough and saves zeroing half a megabyte per face.
	last := rune(subsetRange)
	used.Each(func(r rune) { last = max(last, r) })
	cw := make([]int, last+1)
	n := 0
	used.Each(func(r rune) {
		if face.Has(r) {
			w := face.Width(r)
			if w == 0 {
				w = 65535
			}
			cw[r] = w
			n++
		}
	})
	cw[0] = n
	in.at(def, in.cw).Set(reflect.ValueOf(cw))

	reader := reflect.New(in.readerType)
	in.at(reader.Elem(), in.array).SetBytes(data)
	file := reflect.New(in.fileType)
	in.at(file.Elem(), in.reader).Set(reader)
	in.at(def, in.file).Set(file)

	runes := make(map[int]int, subsetRange+used.Len())
	for r := range subsetRange {
		runes[r] = 0
	}
	in.at(def, in.runes).Set(reflect.ValueOf(runes))

	fontMap.SetMapIndex(key, def)
	return true
}
