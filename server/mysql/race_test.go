//go:build race

package mysql

// raceEnabled: the race detector makes byte-by-byte work (the lexer over
// a 17 MiB statement) some twenty times slower.
const raceEnabled = true
