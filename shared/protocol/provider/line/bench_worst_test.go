package line_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
)

// Worst-case bodies for the canonicaliser: every object must be re-sorted,
// and the bodies stay under the receiver's default 1 MiB limit.

// reversedMembers returns n members "<prefix>NNNNN":0 in descending key order.
func reversedMembers(n int, prefix string) []byte {
	var b bytes.Buffer
	for i := n - 1; i >= 0; i-- {
		if i < n-1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%s%05d":0`, prefix, i)
	}
	return b.Bytes()
}

// worstManyKeys is one event with 60,000 members in reverse key order.
func worstManyKeys() []byte {
	return []byte(`{"events":[{"webhookEventId":"E","type":"t",` + string(reversedMembers(60000, "k")) + `}]}`)
}

// worstEscapedKeys is worstManyKeys with every key spelled with an escape,
// so that each key must be decoded.
func worstEscapedKeys() []byte {
	return []byte(`{"events":[{"webhookEventId":"E","type":"t",` + string(reversedMembers(50000, `\u006b`)) + `}]}`)
}

// worstDeep nests 250 out-of-order objects, the innermost holding 40,000
// reversed members, so that every level must reorder all that it holds.
func worstDeep() []byte {
	const depth = 250
	var b bytes.Buffer
	b.WriteString(`{"events":[{"webhookEventId":"E","type":"t","z":`)
	for range depth {
		b.WriteString(`{"z":`)
	}
	b.WriteByte('{')
	b.Write(reversedMembers(40000, "k"))
	b.WriteByte('}')
	for range depth {
		b.WriteString(`,"a":0}`)
	}
	b.WriteString(`}]}`)
	return b.Bytes()
}

func benchWorst(b *testing.B, body []byte) {
	p := mustNew(b, testSecret)
	req := post(body, sign(testSecret, body))
	ctx := context.Background()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Parse(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseWorstCaseManyKeys(b *testing.B)    { benchWorst(b, worstManyKeys()) }
func BenchmarkParseWorstCaseEscapedKeys(b *testing.B) { benchWorst(b, worstEscapedKeys()) }
func BenchmarkParseWorstCaseDeep(b *testing.B)        { benchWorst(b, worstDeep()) }
