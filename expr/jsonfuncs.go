package expr

import (
	"database/sql/driver"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// decodeList decodes a JSON array, keeping numbers exact. ok is false for
// NULL and JSON null; err is set for malformed JSON.
func decodeList(v driver.Value) (list []any, ok bool, err error) {
	s, ok := text(v)
	if !ok {
		return nil, false, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&list); err != nil {
		return nil, false, err
	}
	return list, list != nil, nil
}

// jsonValue returns a SQLite value as the JSON value a list element equal
// to it holds: numbers as numbers, text as strings, blobs as base64.
func jsonValue(v driver.Value) any {
	switch v := v.(type) {
	case int64:
		return json.Number(strconv.FormatInt(v, 10))
	case float64:
		return json.Number(strconv.FormatFloat(v, 'g', -1, 64))
	case []byte:
		return base64.StdEncoding.EncodeToString(v)
	}
	return v
}

// jsonEqual compares two decoded JSON values: numbers numerically,
// booleans as 1 and 0 (lists of booleans compare with SQLite's 1/0), null
// equal to nothing.
func jsonEqual(a, b any) bool {
	na, aNum := number(a)
	nb, bNum := number(b)
	switch {
	case a == nil || b == nil:
		return false
	case aNum || bNum:
		if !aNum || !bNum {
			return false
		}
		ia, errA := na.Int64()
		ib, errB := nb.Int64()
		if errA == nil && errB == nil {
			return ia == ib
		}
		fa, errA := na.Float64()
		fb, errB := nb.Float64()
		return errA == nil && errB == nil && fa == fb
	}
	return reflect.DeepEqual(a, b)
}

// number returns a JSON number or boolean as a number.
func number(v any) (json.Number, bool) {
	switch v := v.(type) {
	case json.Number:
		return v, true
	case bool:
		if v {
			return "1", true
		}
		return "0", true
	}
	return "", false
}

// arrayHasFunc implements lance_array_has(list, value). It returns an error
// for malformed JSON.
func arrayHasFunc(args []driver.Value) (driver.Value, error) {
	list, ok, err := decodeList(args[0])
	if !ok || args[1] == nil {
		return nil, err
	}
	want := jsonValue(args[1])
	for _, e := range list {
		if jsonEqual(e, want) {
			return true, nil
		}
	}
	return false, nil
}

// arraySetFunc implements lance_array_has_all(a, b) (all) and
// lance_array_has_any(a, b): whether a holds every / some element of b. NULL
// elements of b are ignored. They return an error for malformed JSON.
func arraySetFunc(all bool) func([]driver.Value) (driver.Value, error) {
	return func(args []driver.Value) (driver.Value, error) {
		a, okA, err := decodeList(args[0])
		if !okA {
			return nil, err
		}
		b, okB, err := decodeList(args[1])
		if !okB {
			return nil, err
		}
		for _, want := range b {
			if want == nil {
				continue
			}
			found := false
			for _, e := range a {
				if jsonEqual(e, want) {
					found = true
					break
				}
			}
			if found != all {
				return found, nil
			}
		}
		return all, nil
	}
}
