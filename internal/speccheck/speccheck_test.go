package speccheck

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// referenceSpec returns the upstream spec, read from ../shared/reference
// beside the repository or from $LANCENS_REFERENCE_SPEC. Without it the test
// is skipped, except in CI (CI=true), where its absence is a failure.
func referenceSpec(t *testing.T) []byte {
	t.Helper()
	path := os.Getenv("LANCENS_REFERENCE_SPEC")
	if path == "" {
		path = filepath.Join("..", "..", "..", "shared", "reference", "lance-namespace-spec-v0.11.1.yaml")
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("reference spec missing at %s (set LANCENS_REFERENCE_SPEC)", path)
		}
		t.Skipf("reference spec not found at %s; set LANCENS_REFERENCE_SPEC to compare", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOpenAPIMatchesReference(t *testing.T) {
	ref := referenceSpec(t)
	ours, err := os.ReadFile(filepath.Join("..", "..", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	diffs, err := Diff(ours, ref)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
	if len(diffs) > 0 {
		t.Fatalf("%d wire-visible differences from the reference spec", len(diffs))
	}
}

// TestDiffFindsDifferences proves the comparison is not vacuous: each kind of
// wire-visible change is reported, and prose changes are not.
func TestDiffFindsDifferences(t *testing.T) {
	base := `
openapi: 3.1.1
info: {title: x, version: "1"}
paths:
  /v1/t/{id}/op:
    post:
      operationId: Op
      description: words
      parameters:
        - {name: limit, in: query, required: false, schema: {type: integer, nullable: true}}
      responses:
        200:
          description: ok
          content:
            application/json:
              schema: {$ref: "#/components/schemas/R"}
components:
  schemas:
    R:
      type: object
      required: [a]
      properties:
        a: {type: string, description: "prose"}
        description: {type: string}
        s: {$ref: "#/components/schemas/S", nullable: true}
        m: {type: string, enum: [X, Y]}
`
	for _, tc := range []struct {
		name, old, new string
		wantDiff       bool
	}{
		{"ProseOnly", "description: words", "description: other words", false},
		{"NullableAsTypeArray", "{type: integer, nullable: true}", `{type: [integer, "null"]}`, false},
		{"NullableRefAsOneOf", `s: {$ref: "#/components/schemas/S", nullable: true}`, `s: {oneOf: [{type: "null"}, {$ref: "#/components/schemas/S"}]}`, false},
		{"OperationID", "operationId: Op", "operationId: Op2", true},
		{"Method", "    post:", "    put:", true},
		{"Path", "/v1/t/{id}/op:", "/v1/t/{id}/op2:", true},
		{"ParameterRequired", "required: false", "required: true", true},
		{"ParameterType", "{type: integer, nullable: true}", "{type: string, nullable: true}", true},
		{"Nullability", "{type: integer, nullable: true}", "{type: integer}", true},
		{"Status", "        200:", "        201:", true},
		{"ContentType", "application/json:", "text/plain:", true},
		{"RequiredList", "required: [a]", "required: [a, m]", true},
		{"PropertyName", "a: {type: string", "b: {type: string", true},
		{"PropertyCalledDescription", "description: {type: string}", "description: {type: integer}", true},
		{"Enum", "enum: [X, Y]", "enum: [X, Z]", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := strings.Replace(base, tc.old, tc.new, 1)
			if changed == base {
				t.Fatalf("test case does not change the document")
			}
			diffs, err := Diff([]byte(changed), []byte(base))
			if err != nil {
				t.Fatal(err)
			}
			if got := len(diffs) > 0; got != tc.wantDiff {
				t.Fatalf("differences %q, want some: %v", diffs, tc.wantDiff)
			}
		})
	}
	if diffs, _ := Diff([]byte(base), []byte(base)); !slices.Equal(diffs, nil) {
		t.Fatalf("identical documents differ: %q", diffs)
	}
}
