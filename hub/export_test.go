package hub

import "github.com/xetkit/xetkit/hub/store"

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

// SetStoreHook makes every later store write of h ask hook first (nil:
// none): tests run code at a chosen write.
func SetStoreHook(h *Hub, hook func(kind, name string) error) { h.store.SetHook(hook) }

// SetGCBeforeDelete makes GC run f after its last look at the store and
// before its first delete (nil: nothing).
func SetGCBeforeDelete(f func()) { gcBeforeDelete = f }

// StoreOf is the store h serves from.
func StoreOf(h *Hub) store.Store { return h.store }
