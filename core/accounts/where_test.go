package accounts

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

func TestWhere(t *testing.T) {
	abs, err := filepath.Abs("data/mdpress.db")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ driver, dsn, want string }{
		{DriverSQLite, "/var/lib/mdpress/mdpress.db", "/var/lib/mdpress/mdpress.db"},
		{DriverSQLite, "data/mdpress.db", abs},
		{DriverPostgres, "postgres://mdpress:s3cret@db.internal:5433/accounts?sslmode=require", "postgres mdpress@db.internal:5433/accounts"},
		{DriverPostgres, "host=/run/postgresql port=5432 user=mdpress password=s3cret dbname=accounts", "postgres mdpress@/run/postgresql:5432/accounts"},
		{DriverPostgres, "postgres://mdpress:s3cret@[::1]:5432/accounts", "postgres mdpress@[::1]:5432/accounts"},
	} {
		got := Where(tt.driver, tt.dsn)
		if got != tt.want || strings.Contains(got, "s3cret") {
			t.Errorf("Where(%s, %q) = %q, want %q", tt.driver, tt.dsn, got, tt.want)
		}
	}
}

// TestOpenQuotesNoPartOfAnUnreadableDSN: pgx's reason for a DSN it cannot
// read quotes the word it stopped at, and a password written without its
// quotes or its percent-encoding is cut into such words.
func TestOpenQuotesNoPartOfAnUnreadableDSN(t *testing.T) {
	for _, tt := range []struct{ dsn, want string }{
		{"host=127.0.0.1 port=1 password=correct s3cret dbname=x", `failed to parse as keyword/value (missing "=" after "..." in connection info string)`},
		{`host=127.0.0.1 port=1 password=correct s3"cret dbname=x`, `failed to parse as keyword/value (missing "=" after "..." in connection info string)`},
		{"postgres://bob@127.0.0.1:1/x?password=correct&s3cret&sslmode=disable", `failed to parse as URL (missing key/value separator "=" in URI query parameter: "...")`},
		{`postgres://bob@127.0.0.1:1/x?password=correct&s3"cr"et`, `failed to parse as URL (missing key/value separator "=" in URI query parameter: "...")`},
		{"host=127.0.0.1 port=1 password = s3cret connect_timeout=soon", `invalid connect_timeout (strconv.ParseInt: parsing "...": invalid syntax)`},
	} {
		_, err := Open(t.Context(), DriverPostgres, tt.dsn, nil)
		if stage.CodeOf(err) != stage.CodeInvalid || !strings.HasSuffix(err.Error(), "is not a PostgreSQL DSN: "+tt.want) || strings.Contains(err.Error(), "s3") {
			t.Errorf("%q: %v, want CodeInvalid ending %q", tt.dsn, err, tt.want)
		}
	}
}
