// Package wxmsgtest is the test kit the WeCom and WeChat provider tests share:
// loading the cross-implementation vectors of shared/vectors, building their
// requests, encrypting test messages, checking dedup keys, and the
// worst-case unsigned envelopes ([JunkEnvelopes]) with which the provider
// tests bound what an unauthenticated request costs. It is imported by tests
// only.
package wxmsgtest
