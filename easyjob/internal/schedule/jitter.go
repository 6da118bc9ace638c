package schedule

import (
	"encoding/binary"
	"hash/fnv"
	"time"
)

// JitterOf is the delay of task's fire at scheduled under a jitter of at
// most upTo: a hash of the two, so every node computes the same delay for
// the same fire (a takeover does not move it) while the fires of many
// tasks on one cron spread over [0, upTo). Whole milliseconds; 0 when upTo
// is below one.
func JitterOf(task string, scheduled time.Time, upTo time.Duration) time.Duration {
	ms := int64(upTo / time.Millisecond)
	if ms <= 0 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(task))
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(scheduled.UnixNano()))
	_, _ = h.Write(b[:])
	return time.Duration(h.Sum64()%uint64(ms)) * time.Millisecond
}
