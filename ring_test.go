package main

import (
	"slices"
	"testing"
)

// intValues lists a queue's values, oldest first.
func intValues(q *queue[int]) []int {
	var out []int
	for i := range q.len() {
		out = append(out, *q.at(i))
	}
	return out
}

// TestQueueKeepsOrderAcrossGrowthAndWrap: values come out oldest first
// whether the queue grew, wrapped around its slice, or both.
func TestQueueKeepsOrderAcrossGrowthAndWrap(t *testing.T) {
	var q queue[int]
	var want []int
	for i := range 100 {
		q.push(i)
		want = append(want, i)
		if i%3 == 0 { // pop some as we go, so the start moves and pushes wrap
			if got, _ := q.pop(); got != want[0] {
				t.Fatalf("pop = %d, want %d", got, want[0])
			}
			want = want[1:]
		}
		if got := intValues(&q); !slices.Equal(got, want) {
			t.Fatalf("after pushing %d: %v, want %v", i, got, want)
		}
	}
}

// queueValues lists a queue's values, oldest first.
func queueValues(q *queue[string]) []string {
	var out []string
	for i := range q.len() {
		out = append(out, *q.at(i))
	}
	return out
}

func stringSize(s string) int64 { return int64(len(s)) }

// TestQueueDropsOldestWithinBounds: push keeps the newest values within the
// count bound and the byte bound, dropping the oldest, counting each and
// telling onDrop; a value alone over the byte bound is dropped too.
func TestQueueDropsOldestWithinBounds(t *testing.T) {
	q := newQueue(3, 10, stringSize)
	var told []string
	q.onDrop = func(s string) { told = append(told, s) }
	for _, s := range []string{"a", "b", "c", "d"} {
		q.push(s)
	}
	if got := queueValues(&q); !slices.Equal(got, []string{"b", "c", "d"}) || q.bytes != 3 {
		t.Errorf("count bound: %v (%d bytes), want [b c d] (3 bytes)", got, q.bytes)
	}
	q.push("eeeeeeee") // 3+8 bytes: b goes
	if got := queueValues(&q); !slices.Equal(got, []string{"c", "d", "eeeeeeee"}) || q.bytes != 10 {
		t.Errorf("byte bound: %v (%d bytes), want [c d eeeeeeee] (10 bytes)", got, q.bytes)
	}
	q.push("ffffffffffff") // over the bound alone
	if q.len() != 0 || q.bytes != 0 || q.dropped != 6 || !slices.Equal(told, []string{"a", "b", "c", "d", "eeeeeeee", "ffffffffffff"}) {
		t.Errorf("after a value over the bound: %d values, %d bytes, %d dropped, told %v", q.len(), q.bytes, q.dropped, told)
	}
}

// TestQueuePushFrontIsFirstOut: a value put back goes out first, and, being
// the oldest, is the first dropped when the queue filled meanwhile; it
// costs no copy of the queue.
func TestQueuePushFrontIsFirstOut(t *testing.T) {
	q := newQueue(2, 0, stringSize)
	q.push("a")
	q.push("b")
	v, _ := q.pop()
	q.pushFront(v)
	if got := queueValues(&q); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("put back: %v, want [a b]", got)
	}
	v, _ = q.pop()
	q.push("c")
	q.pushFront(v)
	if got := queueValues(&q); !slices.Equal(got, []string{"b", "c"}) || q.dropped != 1 {
		t.Errorf("put back into a full queue: %v, %d dropped; want [b c], 1", got, q.dropped)
	}
}

// TestQueueOfferRefusesWhenFull: offer keeps what is queued and refuses the
// newest beyond either bound, counting it.
func TestQueueOfferRefusesWhenFull(t *testing.T) {
	q := newQueue(2, 5, stringSize)
	ok := []bool{q.offer("ab"), q.offer("cd"), q.offer("e")}
	if !slices.Equal(ok, []bool{true, true, false}) {
		t.Errorf("count bound: offers %v", ok)
	}
	q.pop()
	if q.offer("efgh") || !q.offer("efg") {
		t.Error("byte bound: want 4 more bytes refused, 3 taken")
	}
	if got := queueValues(&q); !slices.Equal(got, []string{"cd", "efg"}) || q.dropped != 2 || q.bytes != 5 {
		t.Errorf("queue %v, %d dropped, %d bytes", got, q.dropped, q.bytes)
	}
}

// TestQueueOwnsItsBytes: values that leave the queue, popped or cleared,
// leave its byte count, so a queue emptied by clear takes values again
// up to its whole bound.
func TestQueueOwnsItsBytes(t *testing.T) {
	q := newQueue(0, 4, stringSize)
	for q.offer("x") {
	}
	if n := q.clear(); n != 4 || q.bytes != 0 || q.len() != 0 || q.dropped != 5 {
		t.Fatalf("clear = %d: %d bytes, %d values, %d dropped; want 4, 0, 0, 5 (one refused)", n, q.bytes, q.len(), q.dropped)
	}
	for range 4 {
		if !q.offer("x") {
			t.Fatal("a cleared queue refused a value within its bound")
		}
	}
	for range 4 {
		q.pop()
	}
	if q.bytes != 0 {
		t.Errorf("after popping everything, %d bytes counted", q.bytes)
	}
}

// TestQueuePushFrontWraps: a value put before the oldest comes out first,
// whether the queue wraps or grows for it.
func TestQueuePushFrontWraps(t *testing.T) {
	var q queue[int]
	want := []int{}
	for i := range 20 {
		q.pushFront(i)
		want = append([]int{i}, want...)
		if got := intValues(&q); !slices.Equal(got, want) {
			t.Fatalf("after %d: %v, want %v", i, got, want)
		}
	}
}

// TestQueuePopClearsSlot: a value that left is not kept alive by the queue.
func TestQueuePopClearsSlot(t *testing.T) {
	var q queue[*int]
	v := 1
	q.push(&v)
	q.pop()
	for i, p := range q.buf {
		if p != nil {
			t.Errorf("slot %d still holds a value popped", i)
		}
	}
}
