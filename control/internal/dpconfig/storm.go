package dpconfig

import (
	"fmt"
	"strconv"
	"strings"
)

// Storm is storm control of a circuit: how many broadcast, multicast and
// unknown unicast frames per second an E-LAN floods from it (circuit_add's
// storm_*_pps); 0 = no limit. Services and circuits of the controller's
// model and topology file carry it in this shape.
type Storm struct {
	BroadcastPPS int `json:"broadcast_pps,omitempty" yaml:"broadcast_pps" schema:"minimum=0;maximum=100000000"`
	MulticastPPS int `json:"multicast_pps,omitempty" yaml:"multicast_pps" schema:"minimum=0;maximum=100000000"`
	UnknownPPS   int `json:"unknown_pps,omitempty" yaml:"unknown_pps" schema:"minimum=0;maximum=100000000"`
}

// classes are the limits by class name (ParseStorm's), in order.
func (s *Storm) classes() []struct {
	name string
	pps  *int
} {
	return []struct {
		name string
		pps  *int
	}{{"broadcast", &s.BroadcastPPS}, {"multicast", &s.MulticastPPS}, {"unknown", &s.UnknownPPS}}
}

// Validate checks each limit's range.
func (s Storm) Validate() error {
	for _, c := range s.classes() {
		if *c.pps < 0 || *c.pps > StormPPSMax {
			return fmt.Errorf("storm %s_pps %d: want 0..%d frames per second", c.name, *c.pps, StormPPSMax)
		}
	}
	return nil
}

// Apply writes the limits into a circuit's params.
func (s Storm) Apply(c *Circuit) {
	c.StormBroadcastPPS, c.StormMulticastPPS, c.StormUnknownPPS = s.BroadcastPPS, s.MulticastPPS, s.UnknownPPS
}

// String is ParseStorm's form, of the limits that are set ("-": none).
func (s Storm) String() string {
	var f []string
	for _, c := range s.classes() {
		if *c.pps > 0 {
			f = append(f, fmt.Sprintf("%s=%d", c.name, *c.pps))
		}
	}
	if len(f) == 0 {
		return "-"
	}
	return strings.Join(f, ",")
}

// ParseStorm reads "broadcast=N,multicast=N,unknown=N" (any of them).
func ParseStorm(text string) (Storm, error) {
	var s Storm
	for _, kv := range strings.Split(text, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil {
			return s, fmt.Errorf("storm %q: want broadcast=N,multicast=N,unknown=N (frames per second)", text)
		}
		found := false
		for _, c := range s.classes() {
			if c.name == k {
				*c.pps, found = n, true
			}
		}
		if !found {
			return s, fmt.Errorf("storm %q: %q is not broadcast, multicast or unknown", text, k)
		}
	}
	return s, s.Validate()
}
