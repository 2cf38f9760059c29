package tree

import (
	"container/list"
	"sync"
)

// pageCache keeps decoded pages, least recently used out first, within a
// budget of bytes (a page counts its encoded size times decodedFactor, a
// rough measure of its decoded form).
type pageCache struct {
	mu     sync.Mutex
	budget int64
	used   int64
	order  *list.List // of *cached, most recent first
	byID   map[ID]*list.Element
}

// decodedFactor estimates a decoded page's memory per encoded byte: its
// strings and Entry structs take about this much more than the bytes.
const decodedFactor = 3

type cached struct {
	id   ID
	p    *page
	cost int64
}

func newPageCache(budget int64) *pageCache {
	return &pageCache{budget: budget, order: list.New(), byID: map[ID]*list.Element{}}
}

func (c *pageCache) get(id ID) *page {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byID[id]
	if !ok {
		return nil
	}
	c.order.MoveToFront(el)
	return el.Value.(*cached).p
}

func (c *pageCache) has(id ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.byID[id]
	return ok
}

func (c *pageCache) add(id ID, p *page, size int64) {
	cost := size * decodedFactor
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byID[id]; ok || cost > c.budget {
		return
	}
	c.byID[id] = c.order.PushFront(&cached{id, p, cost})
	c.used += cost
	for c.used > c.budget {
		last := c.order.Back()
		v := last.Value.(*cached)
		c.order.Remove(last)
		delete(c.byID, v.id)
		c.used -= v.cost
	}
}
