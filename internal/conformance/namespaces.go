package conformance

import (
	"maps"
	"slices"

	"github.com/lancens/lancens/store"
)

func (s *suite) namespaces(t T) {
	Subtest(t, "CreateAndDescribe", func(t T) {
		tg := s.target(t)
		props := map[string]string{"owner": "alice", "team": "search"}
		got := must(tg.CreateNamespace(ctx(t), []string{"prod"}, store.ModeCreate, props))(t)
		if !maps.Equal(got.Properties, props) {
			t.Fatalf("create returned properties %v, want %v", got.Properties, props)
		}
		desc := must(tg.DescribeNamespace(ctx(t), []string{"prod"}))(t)
		if !maps.Equal(desc.Properties, props) {
			t.Fatalf("describe returned properties %v, want %v", desc.Properties, props)
		}
		must(tg.CreateNamespace(ctx(t), []string{"prod", "analytics"}, store.ModeCreate, nil))(t)
		desc = must(tg.DescribeNamespace(ctx(t), []string{"prod", "analytics"}))(t)
		if desc.Properties == nil || len(desc.Properties) != 0 {
			t.Fatalf("namespace without properties described as %v, want {}", desc.Properties)
		}
	})

	Subtest(t, "CreateModes", func(t T) {
		orig := map[string]string{"v": "1"}
		repl := map[string]string{"v": "2"}
		for _, tc := range []struct {
			name      string
			mode      store.CreateMode
			wantCode  store.Code // -1: success
			wantProps map[string]string
		}{
			{"Create", store.ModeCreate, store.CodeNamespaceAlreadyExists, orig},
			{"ExistOk", store.ModeExistOk, -1, orig},
			{"Overwrite", store.ModeOverwrite, -1, repl},
		} {
			Subtest(t, tc.name, func(t T) {
				tg := s.target(t)
				must(tg.CreateNamespace(ctx(t), []string{"ns"}, store.ModeCreate, orig))(t)
				must(tg.CreateNamespace(ctx(t), []string{"ns", "child"}, store.ModeCreate, nil))(t)
				got, err := tg.CreateNamespace(ctx(t), []string{"ns"}, tc.mode, repl)
				if tc.wantCode >= 0 {
					wantCode(t, err, tc.wantCode)
				} else {
					if err != nil {
						failUnexpected(t, err)
					}
					if !maps.Equal(got.Properties, tc.wantProps) {
						t.Fatalf("returned properties %v, want %v", got.Properties, tc.wantProps)
					}
				}
				desc := must(tg.DescribeNamespace(ctx(t), []string{"ns"}))(t)
				if !maps.Equal(desc.Properties, tc.wantProps) {
					t.Fatalf("stored properties %v, want %v", desc.Properties, tc.wantProps)
				}
				// Overwrite makes a new, empty namespace.
				err = tg.NamespaceExists(ctx(t), []string{"ns", "child"})
				if tc.mode == store.ModeOverwrite {
					wantCode(t, err, store.CodeNamespaceNotFound)
				} else if err != nil {
					t.Fatalf("child lost: %v", err)
				}
			})
		}
	})

	Subtest(t, "CreateErrors", func(t T) {
		tg := s.target(t)
		must(tg.CreateNamespace(ctx(t), []string{"a"}, store.ModeCreate, nil))(t)
		for _, tc := range []struct {
			name string
			id   []string
			mode store.CreateMode
			want store.Code
		}{
			{"ParentMissing", []string{"missing", "child"}, store.ModeCreate, store.CodeNamespaceNotFound},
			{"DeepParentMissing", []string{"a", "b", "c"}, store.ModeExistOk, store.CodeNamespaceNotFound},
			{"Root", []string{}, store.ModeCreate, store.CodeNamespaceAlreadyExists},
			{"ControlCharacter", []string{"bad\x01name"}, store.ModeCreate, store.CodeInvalidInput},
		} {
			Subtest(t, tc.name, func(t T) {
				_, err := tg.CreateNamespace(ctx(t), tc.id, tc.mode, nil)
				wantCode(t, err, tc.want)
			})
		}
		names := collect(t, tg, []string{})
		if !slices.Equal(names, []string{"a"}) {
			t.Fatalf("failed creates changed the catalog: root lists %v", names)
		}
	})

	Subtest(t, "NamesAreExact", func(t T) {
		tg := s.target(t)
		for _, name := range []string{"Mixed", "mixed", "with space", "plus+sign", "uni-ü-名", "dots.and-dash_"} {
			must(tg.CreateNamespace(ctx(t), []string{name}, store.ModeCreate, nil))(t)
			if err := tg.NamespaceExists(ctx(t), []string{name}); err != nil {
				t.Fatalf("%q: %v", name, err)
			}
		}
		got := collect(t, tg, []string{})
		want := []string{"Mixed", "dots.and-dash_", "mixed", "plus+sign", "uni-ü-名", "with space"}
		if !slices.Equal(got, want) {
			t.Fatalf("listed %q, want %q", got, want)
		}
	})

	Subtest(t, "ListDirectChildren", func(t T) {
		tg := s.target(t)
		for _, id := range [][]string{{"b"}, {"a"}, {"a", "x"}, {"a", "x", "deep"}, {"a", "y"}, {"c"}} {
			must(tg.CreateNamespace(ctx(t), id, store.ModeCreate, nil))(t)
		}
		for _, tc := range []struct {
			parent []string
			want   []string
		}{
			{[]string{}, []string{"a", "b", "c"}},
			{[]string{"a"}, []string{"x", "y"}},
			{[]string{"a", "x"}, []string{"deep"}},
			{[]string{"b"}, []string{}},
		} {
			if got := collect(t, tg, tc.parent); !slices.Equal(got, tc.want) {
				t.Errorf("children of %q = %q, want %q", tc.parent, got, tc.want)
			}
		}
		_, _, err := tg.ListNamespaces(ctx(t), []string{"nope"}, store.Page{})
		wantCode(t, err, store.CodeNamespaceNotFound)
	})

	Subtest(t, "ListPages", func(t T) {
		tg := s.target(t)
		var want []string
		for _, name := range []string{"n0", "n1", "n2", "n3", "n4", "n5", "n6"} {
			must(tg.CreateNamespace(ctx(t), []string{name}, store.ModeCreate, nil))(t)
			want = append(want, name)
		}
		for _, limit := range []int{1, 2, 3, 7, 8} {
			var got []string
			token, pages := "", 0
			for {
				names, next, err := tg.ListNamespaces(ctx(t), []string{}, store.Page{Token: token, Limit: limit})
				if err != nil {
					failUnexpected(t, err)
				}
				if len(names) > limit {
					t.Fatalf("limit %d: page of %d", limit, len(names))
				}
				got = append(got, names...)
				pages++
				if next == "" {
					break
				}
				token = next
			}
			if !slices.Equal(got, want) {
				t.Fatalf("limit %d: paged listing %q, want %q", limit, got, want)
			}
			if wantPages := (len(want) + limit - 1) / limit; pages != wantPages {
				t.Errorf("limit %d: %d pages, want %d", limit, pages, wantPages)
			}
		}
		// Any token is a name to start after (store.NameAfter): clients
		// make their own.
		for _, tc := range []struct {
			token string
			want  []string
		}{
			{"n2", []string{"n3", "n4", "n5", "n6"}},
			{"n25", []string{"n3", "n4", "n5", "n6"}},
			{"m", want},
			{"n6", nil},
			{"not-a-token", nil},
		} {
			names, next, err := tg.ListNamespaces(ctx(t), []string{}, store.Page{Token: tc.token, Limit: 3})
			if err != nil {
				failUnexpected(t, err)
			}
			if wantPage := tc.want[:min(3, len(tc.want))]; !slices.Equal(names, wantPage) || (next != "") != (len(tc.want) > 3) {
				t.Errorf("after %q: %q, next %q; want %q", tc.token, names, next, tc.want)
			}
		}
		_, _, err := tg.ListNamespaces(ctx(t), []string{}, store.Page{Token: "n\x01"})
		wantCode(t, err, store.CodeInvalidInput)
	})

	Subtest(t, "DescribeAndExists", func(t T) {
		tg := s.target(t)
		must(tg.CreateNamespace(ctx(t), []string{"a"}, store.ModeCreate, nil))(t)
		root := must(tg.DescribeNamespace(ctx(t), []string{}))(t)
		if root.Properties == nil {
			t.Fatalf("root properties are nil, want {}")
		}
		if err := tg.NamespaceExists(ctx(t), []string{}); err != nil {
			t.Fatalf("root does not exist: %v", err)
		}
		for _, id := range [][]string{{"missing"}, {"a", "missing"}, {"missing", "a"}} {
			_, err := tg.DescribeNamespace(ctx(t), id)
			wantCode(t, err, store.CodeNamespaceNotFound)
			wantCode(t, tg.NamespaceExists(ctx(t), id), store.CodeNamespaceNotFound)
		}
	})

	Subtest(t, "Drop", func(t T) {
		for _, tc := range []struct {
			name     string
			id       []string
			mode     store.DropMode
			behavior store.DropBehavior
			wantCode store.Code // -1: success
			gone     [][]string // namespaces that must be gone afterwards
			kept     [][]string // namespaces that must remain
		}{
			{"Leaf", []string{"a", "x", "leaf"}, store.DropFail, store.DropRestrict, -1,
				[][]string{{"a", "x", "leaf"}}, [][]string{{"a", "x"}}},
			{"RestrictNotEmpty", []string{"a"}, store.DropFail, store.DropRestrict, store.CodeNamespaceNotEmpty,
				nil, [][]string{{"a"}, {"a", "x"}, {"a", "x", "leaf"}}},
			{"Cascade", []string{"a"}, store.DropFail, store.DropCascade, -1,
				[][]string{{"a"}, {"a", "x"}, {"a", "x", "leaf"}}, [][]string{{"b"}}},
			{"FailMissing", []string{"missing"}, store.DropFail, store.DropRestrict, store.CodeNamespaceNotFound,
				nil, [][]string{{"a"}, {"b"}}},
			{"SkipMissing", []string{"missing"}, store.DropSkip, store.DropRestrict, -1,
				nil, [][]string{{"a"}, {"b"}}},
			{"Root", []string{}, store.DropFail, store.DropCascade, store.CodeInvalidInput,
				nil, [][]string{{"a"}, {"b"}}},
		} {
			Subtest(t, tc.name, func(t T) {
				if len(tc.id) == 0 {
					s.skipShared(t)
				}
				tg := s.target(t)
				for _, id := range [][]string{{"a"}, {"a", "x"}, {"a", "x", "leaf"}, {"b"}} {
					must(tg.CreateNamespace(ctx(t), id, store.ModeCreate, map[string]string{"name": id[len(id)-1]}))(t)
				}
				dropped, _, err := tg.DropNamespace(ctx(t), tc.id, tc.mode, tc.behavior)
				if tc.wantCode >= 0 {
					wantCode(t, err, tc.wantCode)
				} else if err != nil {
					failUnexpected(t, err)
				} else if tc.gone != nil && dropped.Properties["name"] != tc.id[len(tc.id)-1] {
					t.Fatalf("drop returned properties %v", dropped.Properties)
				} else if tc.gone == nil && dropped != nil {
					t.Fatalf("skipped drop returned %v, want nothing", dropped)
				}
				for _, id := range tc.gone {
					wantCode(t, tg.NamespaceExists(ctx(t), id), store.CodeNamespaceNotFound)
				}
				for _, id := range tc.kept {
					if err := tg.NamespaceExists(ctx(t), id); err != nil {
						t.Fatalf("%q should remain: %v", id, err)
					}
				}
			})
		}
	})
}

// collect lists every child of parent, following pages.
func collect(t T, tg store.Catalog, parent []string) []string {
	t.Helper()
	out := []string{}
	token := ""
	for {
		names, next, err := tg.ListNamespaces(ctx(t), parent, store.Page{Token: token})
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
