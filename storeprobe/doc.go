// Package storeprobe races writers against a store's conditional writes: the N-way create
// race (every racer presents If-None-Match: * on one fresh key) and the N-way CAS race
// (every racer presents If-Match with the same ETag). It is shared by the certification
// probes B9 and B10 and by the pre-flight a run does before its first cell, which first runs
// two sequential probes, one request at a time: If-Match on a missing key must not create it
// (A5), and a GET right after a successful If-Match must return the new version (D17).
//
// It guarantees:
//
//   - the racers of one race each use their own client (their own connections) and are
//     released together, each writing a body that carries its own nonce;
//   - a race is judged the same way everywhere: exactly one racer may get 2xx (or, when
//     answers went missing, the object may hold the nonce of a racer without an answer),
//     every other answer is 412 or 409, and a GET after the race returns the winner's nonce;
//   - a violation is reported with a witness a person can act on: the probe, the key, how
//     many racers won and their ETags, and which racer's nonce the object holds;
//   - a sequential probe's violation names the probe, the key, what was sent and what was
//     answered (the ETag the write got and the one the read returned);
//   - a call that got no answer, a configuration problem or an interrupted context is never
//     a violation: [Run] returns it as an error (the race could not be judged).
//
// It imports only package store.
package storeprobe
