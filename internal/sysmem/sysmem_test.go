package sysmem

import (
	"errors"
	"testing"
)

func TestAvailableMemory(t *testing.T) {
	const meminfo = "MemTotal:       16384000 kB\nMemFree:         1000 kB\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  int64
	}{
		{"physical only", map[string]string{"/proc/meminfo": meminfo}, 16384000 << 10},
		{"cgroup v2 limit below", map[string]string{"/proc/meminfo": meminfo, "/sys/fs/cgroup/memory.max": "4294967296\n"}, 4 << 30},
		{"cgroup v2 unlimited", map[string]string{"/proc/meminfo": meminfo, "/sys/fs/cgroup/memory.max": "max\n"}, 16384000 << 10},
		{"cgroup v1 limit below", map[string]string{"/proc/meminfo": meminfo, "/sys/fs/cgroup/memory/memory.limit_in_bytes": "2147483648\n"}, 2 << 30},
		{"cgroup v1 unlimited", map[string]string{"/proc/meminfo": meminfo, "/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n"}, 16384000 << 10},
		{"cgroup limit above physical", map[string]string{"/proc/meminfo": meminfo, "/sys/fs/cgroup/memory.max": "68719476736"}, 16384000 << 10},
		{"cgroup only", map[string]string{"/sys/fs/cgroup/memory.max": "1073741824"}, 1 << 30},
		{"nothing readable", nil, fallbackMemory},
		{"garbage", map[string]string{"/proc/meminfo": "MemTotal: lots kB", "/sys/fs/cgroup/memory.max": "?"}, fallbackMemory},
	} {
		read := func(path string) ([]byte, error) {
			if s, ok := tc.files[path]; ok {
				return []byte(s), nil
			}
			return nil, errors.New("no such file")
		}
		if got := availableMemory(read); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
