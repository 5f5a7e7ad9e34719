package accounts

import (
	"path/filepath"
	"strings"
	"testing"
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
