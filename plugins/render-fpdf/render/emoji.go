package render

import (
	"errors"
	"io/fs"
	"sync"

	"github.com/mdpress/mdpress/plugins/render-fpdf/emoji"
)

// SystemEmoji is the colour emoji font emoji are drawn from when it
// exists: Debian's fonts-noto-color-emoji, which the Chromium backend
// draws them with too. Without it they are U+FFFD.
const SystemEmoji = "/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf"

// WithEmojiFont replaces SystemEmoji, for tests; "" draws no emoji.
func WithEmojiFont(path string) Option {
	return func(r *Renderer) { r.emojiPath = path }
}

// emojiFonts are the emoji fonts read so far, by path (nil: none there),
// shared by the renderers of a process (tests and benchmarks make many).
var emojiFonts struct {
	sync.Mutex
	byPath map[string]*emoji.Font
}

// emojiFont maps and parses the emoji font once per process, at the
// first Configure (emoji.Open): glyphs are looked up in place. A missing file is no error; an unreadable one is logged and
// emoji are then drawn as U+FFFD, as without the font: it is the
// system's, not the operator's configuration.
func (r *Renderer) emojiFont() *emoji.Font {
	if r.emojiPath == "" {
		return nil
	}
	emojiFonts.Lock()
	defer emojiFonts.Unlock()
	if f, ok := emojiFonts.byPath[r.emojiPath]; ok {
		return f
	}
	f, err := emoji.Open(r.emojiPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.log.Warn("render-fpdf cannot use the emoji font: emoji are drawn as U+FFFD", "path", r.emojiPath, "err", err)
	}
	if emojiFonts.byPath == nil {
		emojiFonts.byPath = map[string]*emoji.Font{}
	}
	emojiFonts.byPath[r.emojiPath] = f
	return f
}
