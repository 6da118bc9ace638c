package argschema

import (
	"bytes"
	"encoding/json"
	"sync"
)

// Decode decodes the JSON arguments data into v as a handler's arguments
// are decoded: unknown fields refused, anything after the value ignored.
//
// A run's arguments are decoded as its job starts, in the burst of fires
// at the top of a second; a json.Decoder made per run (its buffer, its
// scanner, its reader) was the largest allocation of a fire, and a burst's
// allocations decide whether a garbage collection starts inside it.
// Decoders are kept and fed one value after another, as json.Decoder
// reads a stream: one is kept again only when it consumed its input to
// the end with no error (its error is sticky, and bytes left in it would
// be read before the next value).
func Decode(data []byte, v any) error {
	if len(data) > maxPooled {
		return newStream().decode(data, v)
	}
	s := streams.Get().(*stream)
	err := s.decode(data, v)
	if err == nil && s.drained(data) {
		streams.Put(s)
	}
	return err
}

// maxPooled bounds the arguments whose decoder is kept: a decoder's
// buffer grows to the largest value it read.
const maxPooled = 16 << 10

var streams = sync.Pool{New: func() any { return newStream() }}

// stream is a decoder over a reader that takes one value at a time.
type stream struct {
	r   bytes.Reader
	dec *json.Decoder
	fed int64 // bytes given to the reader, ever: the decoder's offsets count them
}

func newStream() *stream {
	s := &stream{}
	s.dec = json.NewDecoder(&s.r)
	s.dec.DisallowUnknownFields()
	return s
}

func (s *stream) decode(data []byte, v any) error {
	s.r.Reset(data)
	s.fed += int64(len(data))
	return s.dec.Decode(v)
}

// drained reports whether what data holds after the value just decoded
// is white space only (the decoder skips it before the next value).
func (s *stream) drained(data []byte) bool {
	rest := s.fed - s.dec.InputOffset()
	if rest < 0 || rest > int64(len(data)) {
		return false
	}
	for _, c := range data[int64(len(data))-rest:] {
		if !isSpace(c) {
			return false
		}
	}
	return true
}

// isSpace is JSON's white space.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
