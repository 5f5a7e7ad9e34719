package request

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/mdpress/mdpress/core/apierr"
	"github.com/mdpress/mdpress/core/papers"
)

// FuzzDecode: any body decodes to a conversion within the contract, or is
// refused with a 400 whose body is JSON of a bounded size, whatever the
// body repeats of itself.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"markdown":"# Hi"}`,
		`{"markdown":"x","output":"url","theme":"basic","pageSize":"Letter","pageNumeration":"right"}`,
		`{"markdown":"x","pageSize":"a4"}`,
		`{"markdown":"x","pageSize":null,"theme":null}`,
		`{"markdown":"x","markdown":""}`,
		`{"markdown":1e999}`,
		`{"markdown":"x","extra":123456789012345678901234567890e99999}`,
		`{"markdown":"\ud800\udc00 \u0000"}`,
		`{"markdown":["x"]}`,
		`[{"markdown":"x"}]`,
		`"markdown"`,
		`{"markdown":"x"} {}`,
		`{"markdown":"x"`,
		"\xef\xbb\xbf{\"markdown\":\"x\"}",
		`{"markdown":"x","theme":"MODERN"}`,
		`{"markdown":"x","output":"` + "\xff\xfe" + `"}`,
		``,
		`null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := Decode(body)
		if err != nil {
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest {
				t.Fatalf("error %#v is not a 400", err)
			}
			b, merr := json.Marshal(ae.Body)
			if merr != nil {
				t.Fatalf("error body does not marshal: %v", merr)
			}
			if len(b) > 1024 {
				t.Fatalf("error body of %d bytes for a body of %d: %s", len(b), len(body), b)
			}
			return
		}
		if c.Markdown == "" || !slices.Contains(Outputs, c.Output) || !slices.Contains(Themes, c.Theme) ||
			!slices.Contains(Numberings, string(c.Numbering)) {
			t.Fatalf("conversion outside the contract: %+v", c)
		}
		if p, ok := papers.Lookup(c.Page.Name); !ok || p != c.Page {
			t.Fatalf("page %+v is not one of the table's", c.Page)
		}
		// A leading byte order mark is ignored, as RFC 8259 allows.
		if !json.Valid(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))) {
			t.Fatalf("accepted a body that is not JSON: %q", body)
		}
	})
}
