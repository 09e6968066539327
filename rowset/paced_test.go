package rowset

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

// TestPacedWriter writes pieces of random sizes (seeded), some many steps
// long, through a pacedWriter: the bytes arrive whole and in order, every
// write below is one paced piece of at most a step, and the paced sizes
// add up to the bytes written.
func TestPacedWriter(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		rng := rand.New(rand.NewPCG(seed, 9))
		const step = 1000
		var out bytes.Buffer
		var paced []int
		rec := &recordingWriter{w: &out}
		p := pacedWriter{rec, func(n int) { paced = append(paced, n) }, step}
		var want []byte
		for range 50 {
			b := make([]byte, rng.IntN(5*step))
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			n, err := p.Write(b)
			if err != nil || n != len(b) {
				t.Fatalf("seed %d: wrote %d of %d bytes: %v", seed, n, len(b), err)
			}
			want = append(want, b...)
		}
		if !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("seed %d: the bytes written differ", seed)
		}
		if len(paced) != len(rec.sizes) {
			t.Fatalf("seed %d: %d pieces paced, %d written", seed, len(paced), len(rec.sizes))
		}
		for i, n := range paced {
			if n != rec.sizes[i] || n > step || n == 0 {
				t.Fatalf("seed %d: piece %d paced %d bytes, wrote %d (step %d)", seed, i, n, rec.sizes[i], step)
			}
		}
	}
}

// TestPacedWriterError: a failed piece ends the write with the bytes
// written before it and the error.
func TestPacedWriterError(t *testing.T) {
	rec := &recordingWriter{w: &bytes.Buffer{}, failAfter: 2500}
	p := pacedWriter{rec, func(int) {}, 1000}
	n, err := p.Write(make([]byte, 4000))
	if !errors.Is(err, errBoom) || n != 2500 {
		t.Fatalf("wrote %d bytes, err %v; want 2500 and %v", n, err, errBoom)
	}
}

var errBoom = errors.New("boom")

// recordingWriter records the size of every write; with failAfter set it
// fails the write that would pass that many bytes, after writing up to it.
type recordingWriter struct {
	w         *bytes.Buffer
	sizes     []int
	failAfter int
}

func (r *recordingWriter) Write(b []byte) (int, error) {
	r.sizes = append(r.sizes, len(b))
	if r.failAfter > 0 && r.w.Len()+len(b) > r.failAfter {
		k := r.failAfter - r.w.Len()
		r.w.Write(b[:k])
		return k, errBoom
	}
	return r.w.Write(b)
}

// TestAsyncPaced: what is written goes whole and in order to the writer
// below, and Write does not wait for a pace that holds the pieces back
// while the queue has room.
func TestAsyncPaced(t *testing.T) {
	const step = 1000
	var out bytes.Buffer
	release := make(chan struct{})
	held := true
	p := pacedWriter{&out, func(int) {
		if held {
			<-release
			held = false
		}
	}, step}
	a := newAsyncPaced(p, step)
	rng := rand.New(rand.NewPCG(4, 4))
	var want []byte
	// Less than the queue holds, written while the first piece waits.
	for len(want) < (pacedBuffers-1)*4*step {
		b := make([]byte, 1+rng.IntN(3*step))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		if n, err := a.Write(b); err != nil || n != len(b) {
			t.Fatalf("wrote %d of %d bytes: %v", n, len(b), err)
		}
		want = append(want, b...)
	}
	close(release)
	// More than the queue holds, after the pace let go.
	for range 100 {
		b := make([]byte, 1+rng.IntN(10*step))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		if _, err := a.Write(b); err != nil {
			t.Fatal(err)
		}
		want = append(want, b...)
	}
	if err := a.close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("%d bytes arrived, %d written, or they differ", out.Len(), len(want))
	}
}

// TestAsyncPacedError: an error below comes back from close and from
// every Write after it was seen.
func TestAsyncPacedError(t *testing.T) {
	rec := &recordingWriter{w: &bytes.Buffer{}, failAfter: 2500}
	a := newAsyncPaced(pacedWriter{rec, func(int) {}, 1000}, 1000)
	if _, err := a.Write(make([]byte, 4000)); err != nil {
		t.Fatalf("the first write failed before the writer below did: %v", err)
	}
	if err := a.close(); !errors.Is(err, errBoom) {
		t.Fatalf("close: %v, want %v", err, errBoom)
	}
	if _, err := a.Write([]byte{1}); !errors.Is(err, errBoom) {
		t.Fatalf("write after the failure: %v, want %v", err, errBoom)
	}
}
