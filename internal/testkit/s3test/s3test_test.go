package s3test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestStartWithoutBinary checks what a test that needs the gateway does
// when versitygw is not installed: it skips on a developer's machine and
// fails under CI=true. It runs this test binary again with no way to find
// the gateway.
func TestStartWithoutBinary(t *testing.T) {
	if os.Getenv("S3TEST_CHILD") == "1" {
		Start(t)
		return
	}
	for _, tc := range []struct {
		ci   string
		want string // the test's verdict
	}{
		{"true", "--- FAIL"},
		{"", "--- SKIP"},
	} {
		t.Run("CI="+tc.ci, func(t *testing.T) {
			empty := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestStartWithoutBinary$", "-test.v")
			cmd.Env = []string{"S3TEST_CHILD=1", "CI=" + tc.ci, "HOME=" + empty, "PATH=" + empty}
			out, err := cmd.CombinedOutput()
			if failed := err != nil; failed != (tc.want == "--- FAIL") || !strings.Contains(string(out), tc.want) {
				t.Fatalf("without versitygw (CI=%q): %v, want %s:\n%s", tc.ci, err, tc.want, out)
			}
		})
	}
}
