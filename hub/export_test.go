package hub

// FailWrites makes every later store write fail with err (nil: succeed
// again), standing for a full disk in tests.
func FailWrites(h *Hub, err error) {
	if err == nil {
		h.store.SetHook(nil)
		return
	}
	h.store.SetHook(func(string, string) error { return err })
}

// UploadsReading is how many upload bodies the hub is reading now.
func UploadsReading(h *Hub) int { return h.cas.UploadsReading() }
