package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/e3fabric/e3fabric/control/internal/model"
)

// maxSnapshotBody bounds PUT /v1/snapshot: the largest fabric measured
// (bench/controller: 10,000 E-LANs of 8 circuits on 4 spines and 32
// leaves) saves to about 740 MiB, 75 KiB a service with its allocations.
const maxSnapshotBody = 1 << 30

// decodeSnapshot reads a fabric snapshot as a stream: the services one at
// a time, so the process holds the decoded records and one record's text,
// never the whole body besides them. Unknown fields are errors, as in decode.
func decodeSnapshot(r *http.Request, snap *model.FabricSnapshot, check func(part, field string, raw json.RawMessage) ([]byte, error)) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	fail := func(err error) error {
		var he *httpError
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &he):
			return he
		case errors.As(err, &mbe):
			return &httpError{http.StatusRequestEntityTooLarge, "invalid", fmt.Sprintf("request body larger than %d bytes", mbe.Limit)}
		case errors.Is(err, io.EOF):
			return badRequest("request body is empty or cut short: want a JSON object")
		}
		return badRequest("malformed snapshot: %v", err)
	}
	// Each part is checked against its schema (at field), then decoded.
	decode := func(part, field string, v any) error {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fail(err)
		}
		b, err := check(part, field, raw)
		if err != nil {
			return err
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.DisallowUnknownFields()
		if err := d.Decode(v); err != nil {
			return fail(err)
		}
		return nil
	}
	delim := func(want json.Delim) error {
		t, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		if d, ok := t.(json.Delim); !ok || d != want {
			return badRequest("malformed snapshot: want %q, got %v", want, t)
		}
		return nil
	}
	if err := delim('{'); err != nil {
		return err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		var field any
		switch t {
		case "version":
			field = &snap.Version
		case "topology":
			field = &snap.Topology
		case "checks":
			field = &snap.Checks
		case "services":
			if !dec.More() {
				return badRequest("malformed snapshot: services has no value")
			}
			if t, err := dec.Token(); err != nil {
				return fail(err)
			} else if t == nil {
				continue // null: none
			} else if d, ok := t.(json.Delim); !ok || d != '[' {
				return badRequest("malformed snapshot: want \"[\", got %v", t)
			}
			for i := 0; dec.More(); i++ {
				var rec model.ServiceRecord
				if err := decode("services/items", fmt.Sprintf("services[%d]", i), &rec); err != nil {
					return err
				}
				snap.Services = append(snap.Services, rec)
			}
			if err := delim(']'); err != nil {
				return err
			}
			continue
		default:
			return badRequest("malformed snapshot: unknown field %v", t)
		}
		if err := decode(t.(string), t.(string), field); err != nil {
			return err
		}
	}
	if err := delim('}'); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("malformed snapshot: data after the object")
	}
	return nil
}
