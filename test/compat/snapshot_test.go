package compat

import (
	"bufio"
	"compress/gzip"
	"strings"
	"testing"
)

// Nomad's Go client's Operator().Snapshot streams the whole state: a gzipped file of JSON lines
// from a header to an end line.
func TestOperatorSnapshotSave(t *testing.T) {
	rc, err := client.Operator().Snapshot(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	zr, err := gzip.NewReader(rc)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var first, last string
	for sc.Scan() {
		if first == "" {
			first = sc.Text()
		}
		last = sc.Text()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(first, `"t":"header"`) || !strings.Contains(last, `"t":"end"`) {
		t.Fatalf("snapshot: first %q last %q", first, last)
	}
}
