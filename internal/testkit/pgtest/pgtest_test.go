package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

// TestDatabases checks that each test gets a database of its own on a
// server of a supported version that listens on loopback.
func TestDatabases(t *testing.T) {
	a, b := Database(t), Database(t)
	if a == b {
		t.Fatalf("two databases share the URL %s", a)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var version int
	var addr string
	if err := conn.QueryRow(ctx, `SELECT current_setting('server_version_num')::int, current_setting('listen_addresses')`).Scan(&version, &addr); err != nil {
		t.Fatal(err)
	}
	if version < MinVersion*10000 {
		t.Errorf("server version %d is older than %d", version, MinVersion)
	}
	if addr != "127.0.0.1" {
		t.Errorf("server listens on %q, want 127.0.0.1", addr)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE only_here (x int)`); err != nil {
		t.Fatal(err)
	}
	other, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	var n int
	if err := other.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE tablename = 'only_here'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("a table made in one test database shows in another")
	}
}
