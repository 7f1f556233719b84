package arrowin

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// streamed compresses data as a streaming ZSTD encoder does: frames that
// do not declare their content size.
func streamed(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestUnzstd decodes buffers with and without a declared content size, of
// every compressibility, and refuses broken ones without growing its
// output toward the size they declare.
func TestUnzstd(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 24))
	noise := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(4)) // compresses about 4:1
		}
		return b
	}
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	for _, tc := range []struct {
		name string
		data []byte
		zstd func(*testing.T, []byte) []byte
	}{
		{"zeros_640KB_streamed", make([]byte, 640_000), streamed},
		{"zeros_24MB_streamed", make([]byte, 24<<20), streamed},
		{"zeros_24MB_sized", make([]byte, 24<<20), func(_ *testing.T, b []byte) []byte { return enc.EncodeAll(b, nil) }},
		{"noise_3MB_streamed", noise(3 << 20), streamed},
		{"empty", nil, streamed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.zstd(t, tc.data)
			out, err := unzstd([]byte("prefix"), src, len(tc.data), 6+len(tc.data))
			if err != nil {
				t.Fatalf("%d bytes compressed to %d: %v", len(tc.data), len(src), err)
			}
			if string(out[:6]) != "prefix" || !bytes.Equal(out[6:], tc.data) {
				t.Fatal("decoded other bytes than were compressed")
			}
		})
	}
	broken := func(src []byte) []byte { // a frame cut in the middle of its first block
		return src[:min(len(src), 40)]
	}
	for _, tc := range []struct {
		name string
		src  []byte
	}{
		{"garbage", noise(4 << 10)},
		{"cut_bomb", broken(streamed(t, make([]byte, 64<<20)))},
		{"cut_noise", broken(streamed(t, noise(1<<20)))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const declared = 1 << 30
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := unzstd(nil, tc.src, declared, declared)
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatal("a broken buffer decoded")
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
				t.Fatalf("refusing a %d-byte buffer that declares 1 GiB allocated %d bytes", len(tc.src), n)
			}
		})
	}
}
