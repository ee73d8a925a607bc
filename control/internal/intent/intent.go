// Package intent reads and writes the whole fabric as one file, for
// `e3ctl apply`, `diff` and `get`: a topology file with its services
// (examples/demo.yaml). A fault in the file, found here or by the
// controller, is reported at its line and field.
package intent

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/e3fabric/e3fabric/control/internal/model"
	"github.com/e3fabric/e3fabric/control/internal/topology"
)

// Error is a fault in an intent file: its line (0: not known) and field.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": %s", e.Field)
	}
	fmt.Fprintf(&b, ": %s", e.Msg)
	return b.String()
}

// Load reads and parses an intent file.
func Load(path string) (*model.Intent, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	in, err := Parse(path, data)
	return in, data, err
}

// Parse reads an intent file's bytes (name is for errors): the topology,
// checked and normalised, and the services, checked for what can be
// checked without the fabric.
func Parse(name string, data []byte) (*model.Intent, error) {
	t, files, err := topology.Parse(data)
	if err != nil {
		return nil, locate(name, data, "", err)
	}
	in := &model.Intent{Topology: t, Services: []model.ServiceSpec{}}
	for i, f := range files {
		field := fmt.Sprintf("services[%d]", i)
		spec, err := model.SpecFromFile(f)
		if err == nil {
			err = spec.ValidateShape()
		}
		if err != nil {
			return nil, locate(name, data, field, err)
		}
		in.Services = append(in.Services, spec)
	}
	return in, nil
}

// Marshal writes in as an intent file that Parse reads back.
func Marshal(in *model.Intent) ([]byte, error) {
	files := make([]topology.FileService, len(in.Services))
	for i := range in.Services {
		files[i] = in.Services[i].File()
	}
	return topology.Marshal(in.Topology, files)
}

// FromAPI places an error of the controller's about the intent parsed from
// data: at the field it names (a path in the request: topology.links[2],
// services[0].circuits[1]).
func FromAPI(name string, data []byte, field, msg string) error {
	if rest, ok := strings.CutPrefix(field, "topology."); ok {
		// The file's topology was sorted before it was sent: an index
		// into it is not the file's, only the list is.
		field, _, _ = strings.Cut(rest, "[")
	} else if field == "topology" {
		field = ""
	}
	return &Error{File: name, Line: Line(data, field), Field: field, Msg: msg}
}

var yamlLineRE = regexp.MustCompile(`line (\d+)`)

// locate turns err, about the field at prefix (or the whole file), into
// an Error at the field's line.
func locate(name string, data []byte, prefix string, err error) error {
	field := prefix
	var fe *topology.FieldError
	if errors.As(err, &fe) {
		field = strings.TrimPrefix(prefix+"."+fe.Field, ".")
	}
	line, msg := Line(data, field), err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = strings.Join(te.Errors, "; ")
	}
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil && field == "" {
		// A YAML error names its line itself.
		line, _ = strconv.Atoi(m[1])
		msg = strings.Replace(msg, m[0]+": ", "", 1)
	}
	return &Error{File: name, Line: line, Field: field, Msg: msg}
}

// Line is the line of field (a path: services[1].circuits[0].vlan) in the
// YAML data: of its deepest part that the file has, 0 if none.
func Line(data []byte, field string) int {
	var doc yaml.Node
	if field == "" || yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return 0
	}
	n, line := doc.Content[0], 0
	for _, part := range strings.Split(field, ".") {
		key, idx, _ := strings.Cut(part, "[")
		if key != "" {
			var v *yaml.Node
			for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == key {
					line, v = n.Content[i].Line, n.Content[i+1]
				}
			}
			if v == nil {
				return line
			}
			n = v
		}
		for idx != "" {
			var s string
			s, idx, _ = strings.Cut(idx, "]")
			idx = strings.TrimPrefix(idx, "[")
			i, err := strconv.Atoi(s)
			if err != nil || n.Kind != yaml.SequenceNode || i < 0 || i >= len(n.Content) {
				return line
			}
			n = n.Content[i]
			line = n.Line
		}
	}
	return line
}
