package postgres

import "testing"

func TestRebind(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT a FROM t WHERE b = ? AND c > ? LIMIT ?`, `SELECT a FROM t WHERE b = $1 AND c > $2 LIMIT $3`},
		{`SELECT '?', "?" FROM t WHERE x = ?`, `SELECT '?', "?" FROM t WHERE x = $1`},
		{`SELECT 'it''s ?' WHERE y = ?`, `SELECT 'it''s ?' WHERE y = $1`},
		{`VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, `VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`},
	} {
		for range 2 { // the second time from the cache
			if got := rebind(tc.in); got != tc.want {
				t.Errorf("rebind(%q) = %q, want %q", tc.in, got, tc.want)
			}
		}
	}
}
