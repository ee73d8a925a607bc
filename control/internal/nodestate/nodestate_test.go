package nodestate

import (
	"encoding/json"
	"testing"
	"time"
)

// The JSON is the contract with agents of other versions: pin its shape.
func TestWireFormat(t *testing.T) {
	updated := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"status", NodeStatus{Node: "leaf1", BootID: "b1", AppliedGeneration: 12,
			Ports: []PortStatus{{Name: "fab1", LinkUp: true}, {Name: "fab2"}}, Updated: updated},
			`{"node":"leaf1","boot_id":"b1","applied_generation":12,"ports":[{"name":"fab1","link_up":true},` +
				`{"name":"fab2","link_up":false}],"error":"","updated":"2026-01-01T10:00:00Z"}`},
		{"status of an agent without datapath", NodeStatus{Node: "leaf1", Error: "datapath: connect", Updated: updated},
			`{"node":"leaf1","boot_id":"","applied_generation":0,"ports":null,"error":"datapath: connect","updated":"2026-01-01T10:00:00Z"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Fatalf("got  %s\nwant %s", b, tc.want)
			}
			var back NodeStatus
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if again, _ := json.Marshal(back); string(again) != tc.want {
				t.Fatalf("round trip: %s", again)
			}
		})
	}
}

func TestKeys(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{GenerationKey("leaf1"), "/e3/v1/desired/leaf1/generation"},
		{BaseKey("leaf1"), "/e3/v1/desired/leaf1/node"},
		{ServiceKey("leaf1", "red"), "/e3/v1/desired/leaf1/service/red"},
		{CheckKey("leaf1", "leaf1>leaf2:3.7"), "/e3/v1/desired/leaf1/check/leaf1>leaf2:3.7"},
		{StatusKey("spine2"), "/e3/v1/status/spine2"},
	} {
		if tc.got != tc.want {
			t.Errorf("key %q, want %q", tc.got, tc.want)
		}
	}
}
