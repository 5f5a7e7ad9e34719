// Package s3test runs a real S3-compatible server (versitygw with its posix
// backend) on loopback for tests.
//
// The versitygw binary is looked up on PATH, in $GOPATH/bin and in the
// repository's .cache/bin; when absent it is built once per machine into
// .cache/bin with go install (about two minutes), unless MDPRESS_NO_S3_BUILD=1.
// Tests skip with the reason when no binary can be had.
//
// One server per test:
//
//	endpoint, key, secret := s3test.Start(t)
//
// One server per test binary, stopped after the last test:
//
//	func TestMain(m *testing.M) { os.Exit(s3test.Run(m)) }
//	...
//	endpoint, key, secret := s3test.Shared(t)
//	bucket := s3test.Bucket(t) // a fresh name; tests sharing a server keep apart by bucket
//
// The package uses the standard library only, so it can move to wherever
// both the plugins' and the host's tests may import it.
package s3test
