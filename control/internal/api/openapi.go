package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/e3fabric/e3fabric/control/internal/model"
)

// An op is one operation of the API as its handler registers it
// (Server.handle): the contract the OpenAPI document served at
// /openapi.json is generated from, and the schema each request body is
// checked against before its handler runs. One definition, so the document
// is what the server does.
type op struct {
	pattern  string // "GET /v1/services/{name}"
	id       string // operationId
	summary  string
	role     role              // the token it needs; roleNone: none
	tenant   bool              // a tenant's token may call it (on its own services)
	body     any               // the request body's Go type (a zero value); nil: none
	optional bool              // the body may be absent
	yaml     bool              // the body is YAML (or JSON, which is YAML)
	status   int               // on success
	resp     any               // the success body's Go type; nil: none
	errs     []int             // what else it answers (401, 403, 400, 413, 408, 429 and 503 come with role and body)
	params   map[string]string // path parameter -> its `schema` tag (pattern, ...)
	// content is a non-JSON success body's media type (and the body is
	// not generated from a type).
	content string
}

const roleNone role = -1

// errorText is what each error status means in the document.
var errorText = map[int]string{
	http.StatusBadRequest:            "the body is not what the schema allows (error.field names where)",
	http.StatusUnauthorized:          "no token, or not one of ours",
	http.StatusForbidden:             "the read-only token cannot change state",
	http.StatusNotFound:              "no such object",
	http.StatusRequestTimeout:        "the body came too slowly",
	http.StatusConflict:              "it conflicts with the fabric as it is (a name or circuit taken, an object in use)",
	http.StatusRequestEntityTooLarge: "the body is too large",
	http.StatusUnprocessableEntity:   "a well-formed request the fabric cannot take (a rule across fields, an unknown node or segment, no path)",
	http.StatusTooManyRequests:       "this client has too many requests (or this token too many streams) in progress",
	http.StatusNotImplemented:        "not offered by this controller",
	http.StatusServiceUnavailable:    "this replica is not the leader: send changes to the leader",
	http.StatusInsufficientStorage:   "a node's labels, ids or MAC table, or etcd's database, would be exhausted",
	http.StatusGatewayTimeout:        "the controller did not finish in time",
}

// statuses is every status op answers.
func (o *op) statuses() []int {
	set := map[int]bool{o.status: true, http.StatusTooManyRequests: true}
	if o.role != roleNone {
		set[http.StatusUnauthorized] = true
	}
	if o.role == roleAdmin {
		set[http.StatusForbidden], set[http.StatusServiceUnavailable] = true, true
	}
	if o.body != nil {
		set[http.StatusBadRequest], set[http.StatusRequestEntityTooLarge] = true, true
		set[http.StatusRequestTimeout] = true
	}
	for _, c := range o.errs {
		set[c] = true
	}
	out := make([]int, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	sort.Ints(out)
	return out
}

// document is the OpenAPI 3.1 document of ops, and the compiled schema of
// each op's body (by pattern).
func document(ops []op, info map[string]any) ([]byte, map[string]*jsonschema.Schema, error) {
	sc := newSchemas()
	errSchema := sc.of(reflect.TypeFor[model.APIError]())
	paths := map[string]map[string]any{}
	bodies := map[string]schema{}
	for i := range ops {
		o := &ops[i]
		method, path, _ := strings.Cut(o.pattern, " ")
		item := paths[path]
		if item == nil {
			item = map[string]any{}
			paths[path] = item
		}
		x := map[string]any{"operationId": o.id, "summary": o.summary}
		if o.role == roleNone {
			x["security"] = []any{}
		}
		var params []any
		for _, seg := range strings.Split(path, "/") {
			if name, ok := strings.CutPrefix(seg, "{"); ok {
				name = strings.TrimSuffix(name, "}")
				p := schema{"type": "string"}
				if err := constrain(p, o.params[name]); err != nil {
					return nil, nil, fmt.Errorf("%s: %s: %w", o.pattern, name, err)
				}
				params = append(params, map[string]any{"name": name, "in": "path", "required": true, "schema": p})
			}
		}
		if params != nil {
			x["parameters"] = params
		}
		if o.body != nil {
			b := sc.of(reflect.TypeOf(o.body))
			bodies[o.pattern] = b
			ctype := "application/json" // a YAML body (o.yaml) is also taken as JSON, which is YAML
			x["requestBody"] = map[string]any{"required": !o.optional, "content": map[string]any{ctype: map[string]any{"schema": b}}}
		}
		responses := map[string]any{}
		for _, code := range o.statuses() {
			r := map[string]any{}
			switch {
			case code != o.status:
				r["description"] = errorText[code]
				r["content"] = map[string]any{"application/json": map[string]any{"schema": errSchema}}
			case o.content != "":
				r["description"] = "OK"
				r["content"] = map[string]any{o.content: map[string]any{"schema": schema{"type": "string"}}}
			case o.resp != nil:
				r["description"] = http.StatusText(code)
				r["content"] = map[string]any{"application/json": map[string]any{"schema": sc.of(reflect.TypeOf(o.resp))}}
			default:
				r["description"] = http.StatusText(code)
			}
			responses[strconv.Itoa(code)] = r
		}
		x["responses"] = responses
		item[strings.ToLower(method)] = x
	}
	doc := map[string]any{
		"openapi": "3.1.0",
		"info":    info,
		"paths":   paths,
		"components": map[string]any{
			"schemas": sc.comps,
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer",
				"description": "the admin token (reads and changes) or the read-only token (reads)"}},
		},
		"security": []any{map[string]any{"bearer": []any{}}},
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, nil, err
	}
	// The bodies' validators, compiled from the document itself.
	c := jsonschema.NewCompiler()
	var parsed any
	if err := json.Unmarshal(buf.Bytes(), &parsed); err != nil {
		return nil, nil, err
	}
	const url = "urn:e3fabric:openapi.json"
	if err := c.AddResource(url, parsed); err != nil {
		return nil, nil, err
	}
	validators := map[string]*jsonschema.Schema{}
	for i := range ops {
		o := &ops[i]
		if o.body == nil {
			continue
		}
		method, path, _ := strings.Cut(o.pattern, " ")
		ctype := "application~1json"
		ptr := fmt.Sprintf("%s#/paths/%s/%s/requestBody/content/%s/schema", url,
			strings.ReplaceAll(strings.ReplaceAll(path, "~", "~0"), "/", "~1"), strings.ToLower(method), ctype)
		v, err := c.Compile(ptr)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", o.pattern, err)
		}
		validators[o.pattern] = v
	}
	// A snapshot is streamed: its parts are checked one by one.
	for _, part := range []string{"version", "topology", "checks", "services/items"} {
		v, err := c.Compile(url + "#/components/schemas/FabricSnapshot/properties/" + part)
		if err != nil {
			return nil, nil, fmt.Errorf("snapshot %s: %w", part, err)
		}
		validators["snapshot/"+part] = v
	}
	return buf.Bytes(), validators, nil
}

// validate checks a decoded JSON body against v; the error is a 400
// naming the first field at fault (a path below prefix).
func validate(v *jsonschema.Schema, body any, prefix string) error {
	err := v.Validate(body)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return badRequest("%v", err)
	}
	// The leaves of the error tree: what is wrong, each at its field.
	var leaves []*jsonschema.ValidationError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	var msgs []string
	for _, l := range leaves[:min(len(leaves), 3)] {
		m := strings.TrimSpace(l.ErrorKind.LocalizedString(printer))
		for groupRE.MatchString(m) {
			m = groupRE.ReplaceAllString(m, "$1$2")
		}
		if f := fieldPath(prefix, l.InstanceLocation); f != "" {
			m = f + ": " + m
		}
		msgs = append(msgs, m)
	}
	return &fieldError{field: fieldPath(prefix, leaves[0].InstanceLocation), msg: strings.Join(msgs, "; ")}
}

var (
	printer = message.NewPrinter(language.English)
	groupRE = regexp.MustCompile(`(\d),(\d{3})`) // the printer writes 4,095: the API writes 4095
)

// fieldPath writes a JSON instance location below prefix as
// services[2].circuits[0].
func fieldPath(prefix string, loc []string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, p := range loc {
		if _, err := strconv.Atoi(p); err == nil {
			fmt.Fprintf(&b, "[%s]", p)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}
