package api

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// A schema is a JSON Schema (draft 2020-12, OpenAPI 3.1's dialect) as a
// JSON object.
type schema = map[string]any

// schemas makes the JSON Schema of Go types from their encoding/json form
// and their `schema` tags: one component per named struct type, referred
// to by $ref. The tags hold the constraints the server checks a request
// against (openapi.go validates each body with them), so the document says
// what the server takes:
//
//	`schema:"pattern=^[a-z]+$;maxLength=15;enum=a|b;minimum=1;maximum=9;minItems=2;description=..."`
//
// A type with a method JSONSchema() map[string]any (dpconfig.VLAN) gives
// its own.
type schemas struct {
	comps map[string]schema
	names map[reflect.Type]string
}

func newSchemas() *schemas {
	return &schemas{comps: map[string]schema{}, names: map[reflect.Type]string{}}
}

type schemaer interface{ JSONSchema() map[string]any }

var (
	schemaerType = reflect.TypeFor[schemaer]()
	rawType      = reflect.TypeFor[json.RawMessage]()
	timeType     = reflect.TypeFor[time.Time]()
)

// of is the schema of t: a $ref for a named struct, inline otherwise.
func (s *schemas) of(t reflect.Type) schema {
	if t.Implements(schemaerType) {
		return reflect.Zero(t).Interface().(schemaer).JSONSchema()
	}
	if t == timeType {
		return schema{"type": "string", "format": "date-time"}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return s.of(t.Elem())
	case reflect.Bool:
		return schema{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		out := schema{"type": "integer", "format": intFormat(t)}
		if t.Bits() < 64 {
			out["minimum"], out["maximum"] = -(int64(1) << (t.Bits() - 1)), int64(1)<<(t.Bits()-1)-1
		}
		return out
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		out := schema{"type": "integer", "format": intFormat(t), "minimum": 0}
		if t.Bits() < 64 {
			out["maximum"] = int64(1)<<t.Bits() - 1
		}
		return out
	case reflect.Float32, reflect.Float64:
		return schema{"type": "number"}
	case reflect.String:
		return schema{"type": "string"}
	case reflect.Interface:
		return schema{}
	case reflect.Slice, reflect.Array:
		if t == rawType {
			return schema{}
		}
		return schema{"type": "array", "items": s.of(t.Elem())}
	case reflect.Map:
		return schema{"type": "object", "additionalProperties": s.of(t.Elem())}
	case reflect.Struct:
		if t.Name() == "" {
			return s.object(t)
		}
		name, ok := s.names[t]
		if !ok {
			name = s.componentName(t)
			s.names[t] = name
			s.comps[name] = nil // taken: a recursive type refers to itself
			s.comps[name] = s.object(t)
		}
		return schema{"$ref": "#/components/schemas/" + name}
	}
	panic(fmt.Sprintf("schema: no JSON Schema for %s", t))
}

// componentName is t's name, with its package's where another package
// has a type of that name already.
func (s *schemas) componentName(t reflect.Type) string {
	name := t.Name()
	if _, taken := s.comps[name]; taken {
		pkg := t.PkgPath()
		name = strings.ToUpper(pkg[strings.LastIndex(pkg, "/")+1:][:1]) + pkg[strings.LastIndex(pkg, "/")+2:] + name
	}
	return name
}

func intFormat(t reflect.Type) string {
	if t.Bits() == 64 || (t.Bits() == 32 && t.Kind() == reflect.Uint32) {
		return "int64"
	}
	return "int32"
}

// object is the schema of a struct's fields: every field encoding/json
// writes is a property, required unless omitempty (or a pointer), and a
// nil slice or map (written as null) is allowed where the field is not
// omitempty. No other property is allowed: the server refuses unknown
// fields.
func (s *schemas) object(t reflect.Type) schema {
	props := schema{}
	var required []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" || (!f.IsExported() && !f.Anonymous) {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
				walk(f.Type) // embedded: its fields are this object's
				continue
			}
			if name == "" {
				name = f.Name
			}
			p := s.of(f.Type)
			omit := strings.Contains(opts, "omitempty")
			k := f.Type.Kind()
			if !omit && (k == reflect.Slice || k == reflect.Map || k == reflect.Pointer) && f.Type != rawType {
				p = nullable(p)
			}
			if err := constrain(p, f.Tag.Get("schema")); err != nil {
				panic(fmt.Sprintf("schema: %s.%s: %v", t, f.Name, err))
			}
			props[name] = p
			if !omit && k != reflect.Pointer {
				required = append(required, name)
			}
		}
	}
	walk(t)
	out := schema{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

// nullable is p or null.
func nullable(p schema) schema {
	if ty, ok := p["type"].(string); ok && len(p) > 0 {
		out := schema{}
		for k, v := range p {
			out[k] = v
		}
		out["type"] = []string{ty, "null"}
		return out
	}
	return schema{"anyOf": []schema{p, {"type": "null"}}}
}

// constrain adds a `schema` tag's constraints to p (to its items for an
// array's item constraints, prefixed "items.").
func constrain(p schema, tag string) error {
	if tag == "" {
		return nil
	}
	for _, kv := range strings.Split(tag, ";") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("constraint %q: want key=value", kv)
		}
		target := p
		if rest, ok := strings.CutPrefix(k, "items."); ok {
			items, ok := p["items"].(schema)
			if !ok {
				return fmt.Errorf("%s: not an array", k)
			}
			target, k = items, rest
		}
		if _, ok := target["$ref"]; ok && k != "description" {
			return fmt.Errorf("%s on a $ref", k)
		}
		switch k {
		case "pattern", "description", "format":
			target[k] = v
		case "enum":
			target[k] = strings.Split(v, "|")
		case "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems":
			n, err := strconv.ParseInt(v, 0, 64)
			if err != nil {
				return fmt.Errorf("%s=%s: %v", k, v, err)
			}
			target[k] = n
		default:
			return fmt.Errorf("unknown constraint %q", k)
		}
	}
	return nil
}
