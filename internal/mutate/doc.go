// Package mutate enumerates the mutants of a protocol's decision points: small, single-point
// changes to the non-test Go files of some packages, each of which a good exploration of the
// protocol should notice. It guarantees that the mutants of a given source are always the
// same and in the same order (file, then byte offset, then kind), that every mutant differs
// from the original file and from every earlier mutant, and that every mutant still parses;
// whether it also compiles is for the build to say.
//
// The kinds of mutation (see [Kind]):
//
//   - flip-cmp: a comparison flipped, == <-> !=, < <-> <=, > <-> >=.
//   - and-or: && <-> ||.
//   - negate-cond: the condition of an if or a for negated (a leading ! is removed instead).
//   - negate-errors-is: a call errors.Is(...) negated, wherever it stands.
//   - drop-call: a statement that is only a call removed (w.kick(), delete(m, k)).
//   - return-err, return-nil: in a function whose last result is error, a last result nil
//     replaced by err where a variable err is declared in scope, and err replaced by nil.
//   - swap-case, drop-case: in a switch over errors, the body of a case swapped with the next
//     case's body, or emptied.
//
// A dropped call is never one of these, because removing it tests the bench's recording or
// its concurrency scaffolding rather than a decision of the protocol: panic; a call in a
// defer or go statement (those are not expression statements); a call whose name starts
// with record, log or emit (in any case) or with Debug, Warn, Info or Error (loggers and
// recorders); the end of a recorded span (End); and the sync scaffolding Lock, Unlock,
// RLock, RUnlock, Add, Done and Wait, whose removal deadlocks or panics the process instead
// of changing a decision.
//
// A switch is over errors when its tag or one of its case expressions mentions an error: an
// identifier named err or ending in err or Err, a name starting with Err (a sentinel such as
// store.ErrNotFound), a call of errors.Is or errors.As; or when its tag is a variable the
// function defines (:=) from such an expression, as in outcome := f.classify(err).
//
// A function whose doc comment has a line "mutate:skip" yields no mutant.
//
// [Schemata] lays a whole set of mutants over their files at once, for one build that runs
// any one of them (selected by [EnvVar] at run time) or none: for every mutant selected, the
// build behaves as that mutant built alone, and with none selected as the unmutated code.
//
// A mutant's ID is file:line:col:kind, the file relative to the module and the position that
// of the changed token in the original file, so an edit above a mutation point renames it.
package mutate
