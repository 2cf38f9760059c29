package hub

// FailWrites makes every later store write fail with err (nil: succeed
// again), standing for a full disk in tests.
func FailWrites(h *Hub, err error) {
	h.store.beforeWrite = func(string, string) error { return err }
	if err == nil {
		h.store.beforeWrite = nil
	}
}

// UploadsReading is how many upload bodies the hub is reading now.
func UploadsReading(h *Hub) int { return len(h.uploads) }
