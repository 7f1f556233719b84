package conformance

import (
	"maps"
	"slices"
	"strings"

	"github.com/lancens/lancens/store"
)

func declare(t T, tg store.Catalog, id ...string) *store.Table {
	t.Helper()
	tbl, _, err := tg.DeclareTable(ctx(t), id, store.TableDeclaration{Location: remote(strings.Join(id, "/"))})
	if err != nil {
		t.Fatalf("declare %q: %v", id, err)
	}
	return tbl
}

func listTables(t T, tg store.Catalog, ns []string, includeDeclared bool) []string {
	t.Helper()
	var out []string
	token := ""
	for {
		names, next, err := tg.ListTables(ctx(t), ns, includeDeclared, store.Page{Token: token, Limit: 2})
		if err != nil {
			failUnexpected(t, err)
		}
		out = append(out, names...)
		if next == "" {
			return out
		}
		token = next
	}
}

func (s *suite) tables(t T) {
	Subtest(t, "DeclareAndDescribe", func(t T) {
		tg := s.target(t)
		must(tg.CreateNamespace(ctx(t), []string{"ns"}, store.ModeCreate, nil))(t)
		props := map[string]string{"owner": "bob"}
		got, txID, err := tg.DeclareTable(ctx(t), []string{"ns", "t"}, store.TableDeclaration{Location: remote("t"), Properties: props})
		if err != nil {
			failUnexpected(t, err)
		}
		if got.Location != remote("t") || !got.ManagedVersioning || !maps.Equal(got.Properties, props) || txID == "" {
			t.Fatalf("declare returned %+v, tx %q", got, txID)
		}
		d := must(tg.DescribeTable(ctx(t), []string{"ns", "t"}))(t)
		if d.Location != remote("t") || !d.Declared || !d.ManagedVersioning || !maps.Equal(d.Properties, props) {
			t.Fatalf("describe returned %+v", d)
		}
		_, _, err = tg.DeclareTable(ctx(t), []string{"ns", "t"}, store.TableDeclaration{Location: remote("t2")})
		wantCode(t, err, store.CodeTableAlreadyExists)
		_, _, err = tg.DeclareTable(ctx(t), []string{"missing", "t"}, store.TableDeclaration{Location: remote("x")})
		wantCode(t, err, store.CodeNamespaceNotFound)
		_, err = tg.DescribeTable(ctx(t), []string{"ns", "nope"})
		wantCode(t, err, store.CodeTableNotFound)
		_, err = tg.DescribeTable(ctx(t), []string{"nope", "t"})
		wantCode(t, err, store.CodeNamespaceNotFound)
	})

	Subtest(t, "ListTables", func(t T) {
		tg := s.target(t)
		must(tg.CreateNamespace(ctx(t), []string{"a"}, store.ModeCreate, nil))(t)
		must(tg.CreateNamespace(ctx(t), []string{"a", "b"}, store.ModeCreate, nil))(t)
		for _, id := range [][]string{{"a", "t3"}, {"a", "t1"}, {"a", "t2"}, {"a", "b", "deep"}, {"root"}} {
			declare(t, tg, id...)
		}
		// A committed version turns a declared table into one with data.
		must3(tg.CommitVersion(ctx(t), []string{"a", "t2"}, commit(1, "t2")))(t)
		must3(tg.RegisterTable(ctx(t), []string{"a", "reg"}, store.TableRegistration{Location: remote("reg")}))(t)
		for _, tc := range []struct {
			ns              []string
			includeDeclared bool
			want            []string
		}{
			{[]string{"a"}, true, []string{"reg", "t1", "t2", "t3"}},
			{[]string{"a"}, false, []string{"reg", "t2"}},
			{[]string{"a", "b"}, true, []string{"deep"}},
			{[]string{}, true, []string{"root"}},
		} {
			if got := listTables(t, tg, tc.ns, tc.includeDeclared); !slices.Equal(got, tc.want) {
				t.Errorf("tables of %q (declared %v) = %q, want %q", tc.ns, tc.includeDeclared, got, tc.want)
			}
		}
		_, _, err := tg.ListTables(ctx(t), []string{"nope"}, true, store.Page{})
		wantCode(t, err, store.CodeNamespaceNotFound)
		// Any token is a name to start after (store.NameAfter).
		for token, want := range map[string][]string{"reg": {"t1", "t2", "t3"}, "t15": {"t2", "t3"}, "a": {"reg", "t1", "t2", "t3"}, "u": nil} {
			names, _, err := tg.ListTables(ctx(t), []string{"a"}, true, store.Page{Token: token})
			if err != nil {
				failUnexpected(t, err)
			}
			if !slices.Equal(names, want) {
				t.Errorf("tables of a after %q = %q, want %q", token, names, want)
			}
		}
		_, _, err = tg.ListTables(ctx(t), []string{"a"}, true, store.Page{Token: "\xff"})
		wantCode(t, err, store.CodeInvalidInput)

		var all []string
		token := ""
		for {
			ids, next, err := tg.ListAllTables(ctx(t), true, store.Page{Token: token, Limit: 2})
			if err != nil {
				failUnexpected(t, err)
			}
			for _, id := range ids {
				all = append(all, strings.Join(id, "/"))
			}
			if next == "" {
				break
			}
			token = next
		}
		want := []string{"a/b/deep", "a/reg", "a/t1", "a/t2", "a/t3", "root"}
		if !slices.Equal(all, want) {
			t.Fatalf("all tables %q, want %q", all, want)
		}
		ids, _, err := tg.ListAllTables(ctx(t), false, store.Page{})
		if err != nil || len(ids) != 2 {
			t.Fatalf("all tables with data: %q, %v", ids, err)
		}
	})

	Subtest(t, "RegisterAndDeregister", func(t T) {
		tg := s.target(t)
		reg := store.TableRegistration{Location: remote("r1"), Properties: map[string]string{"k": "v"}}
		got := must3(tg.RegisterTable(ctx(t), []string{"r"}, reg))(t)
		if got.Location != remote("r1") || got.Declared || got.ManagedVersioning {
			t.Fatalf("register returned %+v", got)
		}
		_, _, err := tg.RegisterTable(ctx(t), []string{"r"}, reg)
		wantCode(t, err, store.CodeTableAlreadyExists)
		reg.Mode, reg.Location = store.ModeOverwrite, remote("r2")
		must3(tg.RegisterTable(ctx(t), []string{"r"}, reg))(t)
		if d := must(tg.DescribeTable(ctx(t), []string{"r"}))(t); d.Location != remote("r2") {
			t.Fatalf("overwrite left location %q", d.Location)
		}
		gone := must3(tg.DeregisterTable(ctx(t), []string{"r"}))(t)
		if gone.Location != remote("r2") {
			t.Fatalf("deregister returned %+v", gone)
		}
		_, _, err = tg.DeregisterTable(ctx(t), []string{"r"})
		wantCode(t, err, store.CodeTableNotFound)
		// It can be registered again at the location deregistration returned.
		must3(tg.RegisterTable(ctx(t), []string{"r"}, store.TableRegistration{Location: gone.Location}))(t)
	})

	Subtest(t, "Drop", func(t T) {
		tg := s.target(t)
		declare(t, tg, "t")
		dropped, txID, err := tg.DropTable(ctx(t), []string{"t"})
		if err != nil {
			failUnexpected(t, err)
		}
		if dropped.Location != remote("t") || txID == "" {
			t.Fatalf("drop returned %+v %q", dropped, txID)
		}
		_, err = tg.DescribeTable(ctx(t), []string{"t"})
		wantCode(t, err, store.CodeTableNotFound)
		_, _, err = tg.DropTable(ctx(t), []string{"t"})
		wantCode(t, err, store.CodeTableNotFound)
		// The name is free again.
		declare(t, tg, "t")
	})

	Subtest(t, "Rename", func(t T) {
		tg := s.target(t)
		must(tg.CreateNamespace(ctx(t), []string{"x"}, store.ModeCreate, nil))(t)
		must(tg.CreateNamespace(ctx(t), []string{"y"}, store.ModeCreate, nil))(t)
		declare(t, tg, "x", "a")
		declare(t, tg, "x", "taken")
		for _, tc := range []struct {
			name    string
			from    []string
			ns      []string
			newName string
			want    store.Code // -1: success
			at      []string
		}{
			{"SameNamespace", []string{"x", "a"}, nil, "b", -1, []string{"x", "b"}},
			{"AcrossNamespaces", []string{"x", "b"}, []string{"y"}, "c", -1, []string{"y", "c"}},
			{"ToRoot", []string{"y", "c"}, []string{}, "d", -1, []string{"d"}},
			{"Taken", []string{"d"}, []string{"x"}, "taken", store.CodeTableAlreadyExists, nil},
			{"TargetNamespaceMissing", []string{"d"}, []string{"nope"}, "e", store.CodeNamespaceNotFound, nil},
			{"SourceMissing", []string{"x", "a"}, nil, "f", store.CodeTableNotFound, nil},
			{"EmptyName", []string{"d"}, nil, "", store.CodeInvalidInput, nil},
			{"DecomposedName", []string{"d"}, nil, "cafe\u0301", store.CodeInvalidInput, nil},
			{"ZeroWidthName", []string{"d"}, nil, "a\u200bb", store.CodeInvalidInput, nil},
			{"BidiOverrideName", []string{"d"}, nil, "evil\u202etxt", store.CodeInvalidInput, nil},
		} {
			Subtest(t, tc.name, func(t T) {
				_, err := tg.RenameTable(ctx(t), tc.from, tc.ns, tc.newName)
				if tc.want >= 0 {
					wantCode(t, err, tc.want)
					return
				}
				if err != nil {
					failUnexpected(t, err)
				}
				d := must(tg.DescribeTable(ctx(t), tc.at))(t)
				if d.Location != remote("x/a") {
					t.Fatalf("renamed table has location %q; renames keep the location", d.Location)
				}
				_, err = tg.DescribeTable(ctx(t), tc.from)
				wantCode(t, err, store.CodeTableNotFound)
			})
		}
	})

	Subtest(t, "LookAlikeNames", func(t T) {
		// Names are refused, not normalised, when they are not in Unicode
		// normal form C or hold invisible formatting characters: two
		// names that look alike never name two objects.
		tg := s.target(t)
		for _, name := range []string{"cafe\u0301", "a\u200bb", "\ufeffa", "a\u200e", "x\u2066y"} {
			_, err := tg.CreateNamespace(ctx(t), []string{name}, store.ModeCreate, nil)
			wantCode(t, err, store.CodeInvalidInput)
			_, _, err = tg.DeclareTable(ctx(t), []string{name}, store.TableDeclaration{Location: remote("lookalike")})
			wantCode(t, err, store.CodeInvalidInput)
		}
		must(tg.CreateNamespace(ctx(t), []string{"caf\u00e9"}, store.ModeCreate, nil))(t)
	})

	Subtest(t, "NamespaceDropWithTables", func(t T) {
		tg := s.target(t)
		must(tg.CreateNamespace(ctx(t), []string{"n"}, store.ModeCreate, nil))(t)
		must(tg.CreateNamespace(ctx(t), []string{"n", "m"}, store.ModeCreate, nil))(t)
		declare(t, tg, "n", "m", "t")
		must(tg.CreateNamespace(ctx(t), []string{"o"}, store.ModeCreate, nil))(t)
		declare(t, tg, "o", "t")
		_, _, err := tg.DropNamespace(ctx(t), []string{"o"}, store.DropFail, store.DropRestrict)
		wantCode(t, err, store.CodeNamespaceNotEmpty)
		if _, err := tg.DescribeTable(ctx(t), []string{"o", "t"}); err != nil {
			t.Fatalf("restricted drop removed a table: %v", err)
		}
		if _, _, err := tg.DropNamespace(ctx(t), []string{"n"}, store.DropFail, store.DropCascade); err != nil {
			failUnexpected(t, err)
		}
		_, err = tg.DescribeTable(ctx(t), []string{"n", "m", "t"})
		wantCode(t, err, store.CodeNamespaceNotFound)
		// Re-creating the namespace does not bring the table back.
		must(tg.CreateNamespace(ctx(t), []string{"n"}, store.ModeCreate, nil))(t)
		if got := listTables(t, tg, []string{"n"}, true); len(got) != 0 {
			t.Fatalf("re-created namespace lists %q", got)
		}
	})
}
