package controller

import "time"

// throttle spaces global repairs out while the fabric keeps changing, as
// IGPs throttle SPF runs (the idea of RFC 8405): the first change after a
// quiet period is repaired at once; each repair within the burst doubles
// the hold before the next, from min up to max; quiet for `quiet` resets it.
// Each repair of a big fabric costs every node a reconcile, and on shared
// CPUs that load can starve the datapaths into more BFD timeouts: without a
// hold, repairs feed on each other.
type throttle struct {
	min, max, quiet time.Duration
	hold            time.Duration // before the next repair, from the last
	last            time.Time     // the last repair; zero: none yet
}

// newThrottle holds repairs up to maxHold (none if maxHold < 0).
func newThrottle(maxHold time.Duration) *throttle {
	return &throttle{min: min(100*time.Millisecond, max(maxHold, 0)), max: max(maxHold, 0), quiet: 10 * time.Second}
}

// wait returns how long a repair wanted at now must wait (0: at once).
func (t *throttle) wait(now time.Time) time.Duration {
	if t.max == 0 || t.last.IsZero() || now.Sub(t.last) >= t.quiet {
		t.hold = 0
		return 0
	}
	return max(t.last.Add(t.hold).Sub(now), 0)
}

// ran records a repair at now and lengthens the next hold.
func (t *throttle) ran(now time.Time) {
	t.last = now
	t.hold = min(max(2*t.hold, t.min), t.max)
}
