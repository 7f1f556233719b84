package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lancens/lancens/internal/apitest"
	"github.com/lancens/lancens/internal/arrowtest"
	"github.com/lancens/lancens/store"
)

// TestInvalidNames checks that names that are not valid UTF-8 or hold
// control characters, in the path or in a body, are refused with 400 code
// 13 and create nothing: before, %FF was stored as a name no listing could
// show and no request could reach.
func TestInvalidNames(t *testing.T) {
	s := apitest.Start(t, apitest.Options{})
	ctx := t.Context()
	schema := arrowtest.Schema("id", arrow.PrimitiveTypes.Int64)
	if _, err := s.Client.CreateTable(ctx, []string{"t"}, schema, []arrow.RecordBatch{arrowtest.Record(t, schema, `[{"id":1}]`)}, nil); err != nil {
		t.Fatal(err)
	}
	arrowCT := http.Header{"Content-Type": {"application/vnd.apache.arrow.stream"}}
	for _, tc := range []struct {
		name, path, body string
		header           http.Header
	}{
		{"NamespacePathFF", "/v1/namespace/a%FFb/create", `{}`, jsonHeader},
		{"NamespacePathLoneContinuation", "/v1/namespace/%80/create", `{}`, jsonHeader},
		{"NamespacePathTruncated", "/v1/namespace/x%C3/create", `{}`, jsonHeader},
		{"NamespacePathNUL", "/v1/namespace/a%00b/create", `{}`, jsonHeader},
		{"NamespacePathC1Control", "/v1/namespace/a%C2%85b/create", `{}`, jsonHeader},
		{"NamespaceParentFF", "/v1/namespace/%FF$child/create", `{}`, jsonHeader},
		{"NamespaceDescribeFF", "/v1/namespace/%FF/describe", `{}`, jsonHeader},
		{"NamespaceBodyFF", "/v1/namespace/x/create", "{\"id\":[\"x\"],\"properties\":{\"k\":\"\xff\"}}", jsonHeader},
		{"TablePathFF", "/v1/table/t%FF/create", "", arrowCT},
		{"TableDeclareFF", "/v1/table/%FF/declare", `{}`, jsonHeader},
		{"TableDeclareNUL", "/v1/table/x%00/declare", `{}`, jsonHeader},
		{"TableRenameFF", "/v1/table/t/rename", "{\"new_table_name\":\"u\xff\"}", jsonHeader},
		{"TableRenameNUL", "/v1/table/t/rename", `{"new_table_name":"u\u0000v"}`, jsonHeader},
		{"TagBodyFF", "/v1/table/t/tags/create", "{\"tag\":\"v\xff\",\"version\":1}", jsonHeader},
		{"TagNUL", "/v1/table/t/tags/create", `{"tag":"v\u0000","version":1}`, jsonHeader},
		{"TagC1Control", "/v1/table/t/tags/create", `{"tag":"v\u0085","version":1}`, jsonHeader},
		{"BranchFF", "/v1/table/t/branches/create", "{\"name\":\"b\xff\"}", jsonHeader},
		{"BranchNUL", "/v1/table/t/branches/create", `{"name":"b\u0000"}`, jsonHeader},
		// Look-alike names: a delimiter inside a renamed name (listings
		// would show it as two names), decomposed Unicode, bidirectional
		// controls, zero-width characters and the byte order mark.
		{"RenameWithDelimiter", "/v1/table/t/rename", `{"new_table_name":"beta$y"}`, jsonHeader},
		{"RenameWithOtherDelimiter", "/v1/table/t/rename?delimiter=.", `{"new_table_name":"a.b"}`, jsonHeader},
		{"RenameDecomposed", "/v1/table/t/rename", `{"new_table_name":"cafe\u0301"}`, jsonHeader},
		{"RenameRTLOverride", "/v1/table/t/rename", `{"new_table_name":"evil\u202Etxt"}`, jsonHeader},
		{"RenameEmpty", "/v1/table/t/rename", `{"new_table_name":""}`, jsonHeader},
		{"NamespaceDecomposed", "/v1/namespace/cafe%CC%81/create", `{}`, jsonHeader},
		{"NamespaceZeroWidthSpace", "/v1/namespace/a%E2%80%8Bb/create", `{}`, jsonHeader},
		{"NamespaceBOM", "/v1/namespace/%EF%BB%BFa/create", `{}`, jsonHeader},
		{"NamespaceLRM", "/v1/namespace/a%E2%80%8E/create", `{}`, jsonHeader},
		{"NamespaceZWJ", "/v1/namespace/a%E2%80%8Db/create", `{}`, jsonHeader},
		{"NamespaceArabicLetterMark", "/v1/namespace/a%D8%9C/create", `{}`, jsonHeader},
		{"TableDeclareRLO", "/v1/table/x%E2%80%AE/declare", `{}`, jsonHeader},
		{"TableDeclareIsolate", "/v1/table/%E2%81%A6x/declare", `{}`, jsonHeader},
		{"TableCreateDecomposed", "/v1/table/cafe%CC%81/create", "", arrowCT},
		{"TableRegisterWordJoiner", "/v1/table/a%E2%81%A0b/register", `{"location":"x"}`, jsonHeader},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(tc.body)
			if tc.body == "" {
				body = streamBytes(t, schema, arrowtest.Record(t, schema, `[{"id":2}]`))
			}
			status, out, _ := s.Do(t, "POST", tc.path, tc.header, body)
			if status != http.StatusBadRequest || apitest.ErrorCode(out) != int(store.CodeInvalidInput) {
				t.Fatalf("got %d %s, want 400 code 13", status, out)
			}
		})
	}
	namespaces, _, err := s.Client.ListNamespacesPage(ctx, []string{}, "", 0)
	if err != nil || len(namespaces) != 0 {
		t.Fatalf("namespaces after the refused requests: %q (%v)", namespaces, err)
	}
	// A composed name is fine, and stays one name.
	if _, err := s.Client.CreateNamespace(ctx, []string{"caf\u00e9"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Client.DropNamespace(ctx, []string{"caf\u00e9"}, nil); err != nil {
		t.Fatal(err)
	}
	tables, _, err := s.Client.ListTablesPage(ctx, []string{}, "", 0, true)
	if err != nil || strings.Join(tables, ",") != "t" {
		t.Fatalf("tables after the refused requests: %q (%v)", tables, err)
	}
	tags, _, err := s.Client.ListTableTagsPage(ctx, []string{"t"}, "", 0)
	if err != nil || len(tags) != 0 {
		t.Fatalf("tags after the refused requests: %v (%v)", tags, err)
	}
}
