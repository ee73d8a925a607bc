package dpconfig

import (
	"encoding/json"
	"testing"
)

func TestVLANJSON(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    VLAN
		wantErr bool
	}{
		{in: `1`, want: 1},
		{in: `4094`, want: 4094},
		{in: ` 100 `, want: 100},
		{in: `"untagged"`, want: Untagged},
		{in: `0`, wantErr: true},
		{in: `4095`, wantErr: true},
		{in: `4096`, wantErr: true}, // the internal number of Untagged is not a wire value
		{in: `-1`, wantErr: true},
		{in: `1.5`, wantErr: true},
		{in: `"100"`, wantErr: true},
		{in: `"Untagged"`, wantErr: true},
		{in: `null`, wantErr: true},
		{in: `true`, wantErr: true},
	} {
		var v VLAN
		err := json.Unmarshal([]byte(tc.in), &v)
		if (err != nil) != tc.wantErr {
			t.Errorf("unmarshal %s: err %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if tc.wantErr {
			continue
		}
		if v != tc.want {
			t.Errorf("unmarshal %s = %d, want %d", tc.in, v, tc.want)
		}
		out, err := json.Marshal(v)
		if err != nil {
			t.Errorf("marshal %d: %v", v, err)
			continue
		}
		var back VLAN
		if err := json.Unmarshal(out, &back); err != nil || back != v {
			t.Errorf("round trip %s -> %s -> %d (%v)", tc.in, out, back, err)
		}
	}
}

func TestVLANMarshalInvalid(t *testing.T) {
	for _, v := range []VLAN{0, 4095, 5000} {
		if _, err := json.Marshal(Circuit{ID: 1, Port: "c0", VLAN: v, Service: 1}); err == nil {
			t.Errorf("marshal vlan %d: no error", v)
		}
	}
	b, err := json.Marshal(Circuit{ID: 1, Port: "c0", VLAN: Untagged, Service: 2})
	if err != nil || string(b) != `{"id":1,"port":"c0","vlan":"untagged","service":2}` {
		t.Errorf("marshal untagged circuit = %s, %v", b, err)
	}
}
