package cas

import "time"

// SetClock sets the clock a Client reads token lifetimes by (tests move it).
func SetClock(c *Client, now func() time.Time) { c.now = now }
