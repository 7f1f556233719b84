package sqlite

import (
	"encoding/json"
	"time"
)

func encodeMap(m map[string]string) (string, error) {
	if m == nil {
		m = map[string]string{}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", internal("encode map", err)
	}
	return string(b), nil
}

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// msTime converts milliseconds since the Unix epoch to a UTC time.
func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
