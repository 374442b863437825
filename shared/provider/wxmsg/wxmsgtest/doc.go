// Package wxmsgtest is the test kit the WeCom and WeChat provider tests share:
// loading the cross-implementation vectors of shared/vectors, building their
// requests, encrypting test messages and checking dedup keys. It is imported
// by tests only.
package wxmsgtest
