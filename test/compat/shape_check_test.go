package compat

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"time"
)

// The strict decoder behind the recording transport (shape_recorder_test.go): one response body
// against one Go type of Nomad's api module, reporting every problem rather than the first.
//
// "Strict" means what a Nomad server's answer guarantees, which is more than encoding/json
// checks:
//   - every field the Go struct has decodes without a type error (a time is RFC 3339, a number
//     is a number, an array is an array);
//   - a field Go's encoder could never have written as null (a string, number, bool or struct
//     value) is not null;
//   - a JSON key with no field in the Go struct is reported as unknown; the reviewed ones that
//     are Caravan's own or Nomad's server-only fields are listed in knownExtraFields, any other
//     one fails (a misspelt field is silently dropped by every Go client);
//   - a field Nomad's server always fills is there and not null (alwaysSent below).

// shapeProblems is what one body got wrong: decode errors (by JSON path) and unknown keys
// (by Go type and key, so that one mistake in a list of 50 objects is one line).
type shapeProblems struct {
	typeErrors []string
	unknown    []string
	missing    []string
	// absent: fields of the api struct with no key at all in the answer (Type.Field).
	absent []string
}

func (p *shapeProblems) empty() bool {
	return len(p.typeErrors) == 0 && len(p.unknown) == 0 && len(p.missing) == 0
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	durationType    = reflect.TypeFor[time.Duration]()
)

// checkShape decodes body into target (a pointer to the api type) the way the Go client does,
// then walks body against the type for everything the plain decode lets through. stored says
// the answer is the server's own object (not a job parsed from a submission), so Nomad's
// always-sent fields apply.
func checkShape(body []byte, target any, stored bool) *shapeProblems {
	p := &shapeProblems{}
	if err := json.Unmarshal(body, target); err != nil {
		p.typeErrors = append(p.typeErrors, "decode: "+err.Error())
	}
	t := reflect.TypeOf(target).Elem()
	walkShape(json.RawMessage(body), t, "$", p)
	if stored && len(p.typeErrors) == 0 {
		checkAlwaysSent(reflect.ValueOf(target).Elem(), "$", p)
	}
	return p
}

var arrayIndex = regexp.MustCompile(`\[\d+\]`)

func walkShape(raw json.RawMessage, t reflect.Type, path string, p *shapeProblems) {
	raw = bytes.TrimSpace(raw)
	isNull := bytes.Equal(raw, []byte("null"))
	bad := func(want string) {
		got := string(raw)
		if len(got) > 60 {
			got = got[:60] + "…"
		}
		p.typeErrors = append(p.typeErrors, fmt.Sprintf("%s: want %s (%s), got %s", path, want, t, got))
	}
	// A type with its own decoding (time.Time, api's custom types): decode it alone.
	if t.Kind() != reflect.Interface && (reflect.PointerTo(t).Implements(jsonUnmarshaler) || (t.Kind() != reflect.Struct && reflect.PointerTo(t).Implements(textUnmarshaler))) {
		if isNull && t.Kind() != reflect.Pointer {
			if t == reflect.TypeFor[time.Time]() {
				bad("a time (Nomad writes the zero time, never null)")
			}
			return
		}
		if err := json.Unmarshal(raw, reflect.New(t).Interface()); err != nil {
			bad(err.Error())
		}
		return
	}
	switch t.Kind() {
	case reflect.Interface:
		return
	case reflect.Pointer:
		if !isNull {
			walkShape(raw, t.Elem(), path, p)
		}
	case reflect.Slice:
		if isNull {
			return
		}
		if t.Elem().Kind() == reflect.Uint8 {
			if err := json.Unmarshal(raw, reflect.New(t).Interface()); err != nil {
				bad("base64 bytes")
			}
			return
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			bad("an array")
			return
		}
		for i, item := range items {
			walkShape(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i), p)
		}
	case reflect.Map:
		if isNull {
			return
		}
		var entries map[string]json.RawMessage
		if err := json.Unmarshal(raw, &entries); err != nil {
			bad("an object (map)")
			return
		}
		for k, v := range entries {
			walkShape(v, t.Elem(), fmt.Sprintf("%s[%q]", path, k), p)
		}
	case reflect.Struct:
		if isNull {
			bad("an object (a struct value is never null)")
			return
		}
		var entries map[string]json.RawMessage
		if err := json.Unmarshal(raw, &entries); err != nil {
			bad("an object")
			return
		}
		fields := jsonFields(t)
		for name := range fields {
			found := false
			for k := range entries {
				if strings.EqualFold(name, k) {
					found = true
					break
				}
			}
			if !found {
				p.absent = append(p.absent, typeName(t)+"."+name)
			}
		}
		for k, v := range entries {
			f, ok := fields[k]
			if !ok {
				for name, ff := range fields {
					if strings.EqualFold(name, k) {
						f, ok = ff, true
						break
					}
				}
			}
			if !ok {
				p.unknown = append(p.unknown, typeName(t)+"."+k)
				continue
			}
			walkShape(v, f.Type, path+"."+k, p)
		}
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		if isNull {
			bad("a value (Go's encoder never writes null here)")
			return
		}
		if err := json.Unmarshal(raw, reflect.New(t).Interface()); err != nil {
			bad(err.Error())
		}
	default:
		if err := json.Unmarshal(raw, reflect.New(t).Interface()); err != nil {
			bad(err.Error())
		}
	}
}

// jsonFields are the JSON names of t's fields as encoding/json sees them, with the fields of
// untagged embedded structs promoted.
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				for k, v := range jsonFields(et) {
					if _, shadowed := out[k]; !shadowed {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f
	}
	return out
}

func typeName(t reflect.Type) string { return t.String() }

// sortedUnique is list without duplicates, sorted, with array indexes folded ("[3]" → "[]").
func sortedUnique(list []string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, s := range list {
		s = arrayIndex.ReplaceAllString(s, "[]")
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}
