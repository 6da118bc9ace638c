package argschema

import (
	"strings"
	"sync"
	"testing"
)

type decArgs struct {
	N    int      `json:"n"`
	Tags []string `json:"tags,omitempty"`
}

// A kept decoder reads each value afresh: values decoded one after
// another, from many goroutines, never see each other's bytes or errors.
func TestDecodeReusesNothingStale(t *testing.T) {
	inputs := []string{`{"n":1}`, `{"n":2,"tags":["a"]}  `, `{"n":3} trailing`, `{"n":"x"}`, `{"m":1}`, `{"n":4`, "\n{\"n\":5}\n", `7`}
	want := []struct {
		n   int
		err string
	}{{1, ""}, {2, ""}, {3, ""}, {0, "cannot unmarshal string"}, {0, `unknown field "m"`}, {0, "unexpected EOF"}, {5, ""}, {0, "cannot unmarshal number"}}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				k := (i + g) % len(inputs)
				var a decArgs
				err := Decode([]byte(inputs[k]), &a)
				switch {
				case want[k].err == "" && err != nil:
					t.Errorf("%q: %v", inputs[k], err)
					return
				case want[k].err != "" && (err == nil || !strings.Contains(err.Error(), want[k].err)):
					t.Errorf("%q: error %v, want %q", inputs[k], err, want[k].err)
					return
				case want[k].err == "" && a.N != want[k].n:
					t.Errorf("%q: n = %d, want %d", inputs[k], a.N, want[k].n)
					return
				}
			}
		})
	}
	wg.Wait()
}

// Large arguments decode too (their decoder is not kept).
func TestDecodeLarge(t *testing.T) {
	var a decArgs
	big := `{"n":9,"tags":["` + strings.Repeat("x", maxPooled) + `"]}`
	if err := Decode([]byte(big), &a); err != nil || a.N != 9 || len(a.Tags[0]) != maxPooled {
		t.Fatalf("n=%d err=%v", a.N, err)
	}
}

func BenchmarkDecode(b *testing.B) {
	data := []byte(`{"n":1}`)
	b.ReportAllocs()
	for b.Loop() {
		var a decArgs
		if err := Decode(data, &a); err != nil {
			b.Fatal(err)
		}
	}
}
