// Package payloadcodec holds issue 33's comparison of payload codecs for a
// 4 KB chat event in English, Japanese and Chinese (its tests and
// benchmarks): the write units of the payload item each codec gives, and
// its CPU per event, beside gzip, which the store uses. It lives in the
// harnesses' module so that the product's go.mod requires none of the
// candidates.
package payloadcodec
