package api

import (
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
func decodeSnapshot(r *http.Request, snap *model.FabricSnapshot) error {
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
			if err := delim('['); err != nil {
				return err
			}
			for dec.More() {
				var rec model.ServiceRecord
				if err := dec.Decode(&rec); err != nil {
					return fail(err)
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
		if err := dec.Decode(field); err != nil {
			return fail(err)
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
