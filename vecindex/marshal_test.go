package vecindex

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"reflect"
	"testing"
)

// smallIndexes builds one index of every kind over n vectors (n/1.5 for
// hamming), with varied metrics.
func smallIndexes(t testing.TB, seed int64, n int) map[string]*Index {
	t.Helper()
	vs := clustered(31, n, 16, 10)
	out := map[string]*Index{}
	for name, p := range map[string]Params{
		"flat-cosine": {Kind: IVFFlat, Metric: Cosine, NumPartitions: 6},
		"pq-l2":       {Kind: IVFPQ, NumPartitions: 6, NumSubVectors: 4},
		"pq4-dot":     {Kind: IVFPQ, Metric: Dot, NumPartitions: 6, NumSubVectors: 1, NumBits: 4},
		"sq-cosine":   {Kind: IVFSQ, Metric: Cosine, NumPartitions: 6},
		"hnsw-sq":     {Kind: IVFHNSWSQ, NumPartitions: 2, M: 6},
		"hnsw-pq-dot": {Kind: IVFHNSWPQ, Metric: Dot, NumPartitions: 2, NumSubVectors: 2, M: 6},
	} {
		p.Seed = seed
		ix, err := Build(context.Background(), p, vs)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = ix
	}
	ix, err := BuildBytes(context.Background(), Params{Kind: IVFFlat, Metric: Hamming, NumPartitions: 5, Seed: seed}, randomBytes(32, n*2/3, 8))
	if err != nil {
		t.Fatal(err)
	}
	out["flat-hamming"] = ix
	return out
}

func marshal(t testing.TB, ix *Index) []byte {
	t.Helper()
	data, err := ix.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestMarshalRoundTrip(t *testing.T) {
	qs := queriesNear(clustered(31, 1500, 16, 10), 33, 10)
	for name, ix := range smallIndexes(t, 1, 1500) {
		ix.Remove(map[int64]bool{3: true, 10: true})
		data := marshal(t, ix)
		loaded, err := Load(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(marshal(t, loaded), data) {
			t.Errorf("%s: re-marshalled bytes differ", name)
		}
		if loaded.Params() != ix.Params() || !reflect.DeepEqual(loaded.Stats(), ix.Stats()) || loaded.Len() != ix.Len() {
			t.Errorf("%s: params, stats or length differ after Load", name)
		}
		for i, q := range qs {
			for _, o := range []SearchOptions{{K: 5, Nprobes: 2}, {K: 5, Candidates: 30, Ef: 12}, {K: 3, Allow: onePercent}} {
				if got, want := loaded.Search(q, o), ix.Search(q, o); !reflect.DeepEqual(got, want) {
					t.Fatalf("%s query %d %+v: results differ after Load", name, i, o)
				}
			}
		}
	}
}

func TestDeterministicBuild(t *testing.T) {
	a, b, c := smallIndexes(t, 7, 1500), smallIndexes(t, 7, 1500), smallIndexes(t, 8, 1500)
	for name := range a {
		if !bytes.Equal(marshal(t, a[name]), marshal(t, b[name])) {
			t.Errorf("%s: two builds with the same seed differ", name)
		}
		if bytes.Equal(marshal(t, a[name]), marshal(t, c[name])) {
			t.Errorf("%s: builds with different seeds are identical", name)
		}
	}
}

// reseal replaces the checksum of data so that Load looks past it.
func reseal(data []byte) []byte {
	if len(data) < 4 {
		return data
	}
	out := bytes.Clone(data)
	binary.LittleEndian.PutUint32(out[len(out)-4:], crc32.Checksum(out[:len(out)-4], crcTable))
	return out
}

// loadSafely loads data and, when that succeeds, searches the index; it
// fails the test on a panic.
func loadSafely(t testing.TB, data []byte) error {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("Load or Search panicked: %v", r)
		}
	}()
	ix, err := Load(data)
	if err == nil {
		q := make([]float32, ix.Dim())
		for i := range q {
			q[i] = float32(i % 3)
		}
		ix.Search(q, SearchOptions{K: 5, Candidates: 20, Nprobes: 3, Ef: 8})
		ix.Search(q, SearchOptions{K: 5, Allow: onePercent})
		ix.Stats()
	}
	return err
}

func TestLoadRejectsCorruptData(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for name, ix := range smallIndexes(t, 1, 1500) {
		data := marshal(t, ix)
		for cut := 0; cut < len(data); cut += 1 + len(data)/200 {
			if loadSafely(t, data[:cut]) == nil {
				t.Fatalf("%s: Load accepted %d of %d bytes", name, cut, len(data))
			}
			if cut > 0 && loadSafely(t, reseal(data[:cut])) == nil {
				t.Fatalf("%s: Load accepted %d of %d bytes with a valid checksum", name, cut, len(data))
			}
		}
		for range 300 {
			bad := bytes.Clone(data)
			bad[rng.IntN(len(bad))] ^= byte(1 + rng.IntN(255))
			if loadSafely(t, bad) == nil {
				t.Fatalf("%s: Load accepted a corrupted byte", name)
			}
			loadSafely(t, reseal(bad)) // may load, must not panic
		}
	}
	garbage := make([]byte, 4096)
	for i := range garbage {
		garbage[i] = byte(rng.Uint32())
	}
	for _, data := range [][]byte{nil, garbage, append([]byte(magic), garbage...), reseal(append([]byte(magic), garbage...))} {
		if loadSafely(t, data) == nil {
			t.Fatal("Load accepted garbage")
		}
	}
}

func FuzzLoad(f *testing.F) {
	for _, ix := range smallIndexes(f, 1, 60) {
		data := marshal(f, ix)
		f.Add(data)
		f.Add(data[:len(data)/2])
	}
	f.Add([]byte(magic))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		loadSafely(t, data)
		loadSafely(t, reseal(data))
	})
}
