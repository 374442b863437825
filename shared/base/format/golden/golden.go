// Package golden checks persisted shapes against their golden fixtures,
// testdata/formats/<shape>.v<N>.json at the repository's root: one per
// shape and format version, written by the code of that version (run the
// format tests with HOOKWALL_UPDATE_FORMATS=1 to write them). A fixture
// lists the shape's fields with their types and keeps one sample as
// written. A field of the fixture that is gone or has another type is a
// rename, a removal or a retype, which takes a format version step
// (docs/FORMATS.md); a new field is allowed but must be recorded.
package golden

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/base/format"
)

// UpdateEnv, set to 1, makes [Check] write the fixtures instead of reading them.
const UpdateEnv = "HOOKWALL_UPDATE_FORMATS"

// Fixture is one shape's golden fixture.
type Fixture struct {
	// Shape names the shape ("record", "payload", "message", ...).
	Shape string `json:"shape"`
	// Family is the shape's format family and Version its format version.
	Family  format.Family `json:"family"`
	Version int           `json:"version"`
	// Fields maps each field (a top-level attribute of an item; a dotted
	// path in a JSON document) to its type.
	Fields map[string]string `json:"fields"`
	// Sample is one value as written: the item in DynamoDB JSON, or the
	// JSON document.
	Sample json.RawMessage `json:"sample"`
}

// Dir is testdata/formats at the root of the module holding the working
// directory.
func Dir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("golden: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "testdata", "formats"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("golden: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Path is the fixture file of shape at version.
func Path(shape string, version int) (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, fmt.Sprintf("%s.v%d.json", shape, version)), nil
}

// Load reads the fixture of shape at version.
func Load(shape string, version int) (*Fixture, error) {
	p, err := Path(shape, version)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("golden: read fixture: %w", err)
	}
	var f Fixture
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("golden: decode %s: %w", p, err)
	}
	return &f, nil
}

// Save writes f to its file.
func Save(f *Fixture) error {
	p, err := Path(f.Shape, f.Version)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("golden: encode %s: %w", f.Shape, err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("golden: %w", err)
	}
	if err := os.WriteFile(p, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("golden: write fixture: %w", err)
	}
	return nil
}

// ItemFields are the top-level attributes of item with their DynamoDB
// types ("S", "N", "M", ...). A name with a variable part after '#' (a
// step's "step#<name>") stands as "<prefix>#*".
func ItemFields(item map[string]types.AttributeValue) map[string]string {
	out := make(map[string]string, len(item))
	for name, v := range item {
		out[fieldName(name)] = itemType(v)
	}
	return out
}

func fieldName(name string) string {
	if i := strings.IndexByte(name, '#'); i >= 0 && i < len(name)-1 {
		return name[:i+1] + "*"
	}
	return name
}

func itemType(v types.AttributeValue) string {
	switch v.(type) {
	case *types.AttributeValueMemberS:
		return "S"
	case *types.AttributeValueMemberN:
		return "N"
	case *types.AttributeValueMemberB:
		return "B"
	case *types.AttributeValueMemberBOOL:
		return "BOOL"
	case *types.AttributeValueMemberNULL:
		return "NULL"
	case *types.AttributeValueMemberM:
		return "M"
	case *types.AttributeValueMemberL:
		return "L"
	case *types.AttributeValueMemberSS:
		return "SS"
	case *types.AttributeValueMemberNS:
		return "NS"
	case *types.AttributeValueMemberBS:
		return "BS"
	}
	return fmt.Sprintf("%T", v)
}

// JSONFields are the fields of the JSON object doc, nested objects' as
// dotted paths, with their JSON types; the fields named in opaque (a
// payload) are not looked into.
func JSONFields(doc []byte, opaque ...string) (map[string]string, error) {
	var v map[string]any
	if err := json.Unmarshal(doc, &v); err != nil {
		return nil, fmt.Errorf("golden: decode document: %w", err)
	}
	out := map[string]string{}
	walk("", v, out, opaque)
	return out, nil
}

func walk(prefix string, obj map[string]any, out map[string]string, opaque []string) {
	for k, v := range obj {
		path := prefix + k
		if m, ok := v.(map[string]any); ok && !slices.Contains(opaque, path) {
			out[path] = "object"
			walk(path+".", m, out, opaque)
			continue
		}
		out[path] = jsonType(v)
	}
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case nil:
		return "null"
	case []any:
		return "array"
	}
	return "object"
}

// Diff compares the fields written now (got) with a fixture's (want): one
// line per field gone or retyped (each needs a version step) and per field
// added (allowed; the fixture must record it). None: the same shape.
func Diff(want, got map[string]string) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(want)) {
		g, ok := got[name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("field %q (%s) is no longer written: a renamed or removed persisted field takes a format version step", name, want[name]))
		case g != want[name]:
			out = append(out, fmt.Sprintf("field %q is written as %s, the fixture has %s: a retyped persisted field takes a format version step", name, g, want[name]))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[name]; !ok {
			out = append(out, fmt.Sprintf("field %q (%s) is new: adding is allowed; record it (%s=1)", name, got[name], UpdateEnv))
		}
	}
	return out
}

// TB is the part of testing.TB that [Check] uses.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Check compares what today's code wrote of shape (fields, and sample as
// written) with the fixture of the family's current version, failing t on
// any difference. With HOOKWALL_UPDATE_FORMATS=1 it writes the fixture
// instead.
func Check(t TB, shape string, family format.Family, fields map[string]string, sample any) {
	t.Helper()
	version := format.Current(family)
	if os.Getenv(UpdateEnv) == "1" {
		b, err := json.Marshal(sample)
		if err != nil {
			t.Fatalf("golden: encode the sample of %s: %v", shape, err)
			return
		}
		if err := Save(&Fixture{Shape: shape, Family: family, Version: version, Fields: fields, Sample: b}); err != nil {
			t.Fatalf("%v", err)
		}
		return
	}
	f, err := Load(shape, version)
	if err != nil {
		t.Fatalf("%v (write it with %s=1)", err, UpdateEnv)
		return
	}
	for _, d := range Diff(f.Fields, fields) {
		t.Errorf("%s v%d: %s", shape, version, d)
	}
}
