// Package stage holds what a plugin author implements: one Go interface per
// pipeline stage, the request and response structs those interfaces take, the
// backend-neutral document tree that the parser emits, and the error kinds
// that survive the trip across a plugin's process boundary.
//
// Every call has the shape Method(ctx, *XRequest) (*XResponse, error) so that
// fields can be added to the structs without breaking any implementation.
package stage
