// Package rowttl holds what every layer of the engine shares with its
// callers: the sentinel errors that a rejected request wraps, so that a
// service embedding the engine can test them with errors.Is whatever package
// produced them.
//
// It must never import another package of this module: every package imports
// it, so it sits below all of them.
package rowttl
