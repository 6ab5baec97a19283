package fence

import (
	"fmt"
	"strings"
)

// Variant names a protocol variant: Correct, or one deliberately broken mutation the bench
// must catch. Each variant is a single switch read where the behaviour lives; its Reader says
// who reads it: this package, or the code that drives the protocol.
type Variant string

// The variants. Correct is the protocol as specified; every other value breaks exactly one
// rule. Mutant ids (M1...) refer to the protocol design's mutant index.
const (
	Correct                   Variant = "correct"
	NoReadoptionGuard         Variant = "no-readoption-guard"
	CASConcurrentWithMetadata Variant = "cas-concurrent-with-metadata"
	RestoreBeforeClaim        Variant = "restore-before-claim"
	NoSweep                   Variant = "no-sweep"
	NoSurvivorCheck           Variant = "no-survivor-check"
	NoReverify                Variant = "no-reverify"
	NoTermFloor               Variant = "no-term-floor"
	ConflictIsFenced          Variant = "conflict-is-fenced"
	ConflictIsSuccess         Variant = "conflict-is-success"
	AmbiguousIsSuccess        Variant = "ambiguous-is-success"
	AmbiguousIsFenced         Variant = "ambiguous-is-fenced"
	AdoptWithoutIdentity      Variant = "adopt-without-identity"
	SDKRetries                Variant = "sdk-retries"
	ReuseHalfClaimed          Variant = "reuse-half-claimed"
	WithdrawArbitrated        Variant = "withdraw-arbitrated"
	TargetClaimsBlindly       Variant = "target-claims-blindly"
	RevertWithFreshToken      Variant = "revert-with-fresh-token"
	RecreateOn404             Variant = "recreate-on-404"
	NoSegmentGates            Variant = "no-segment-gates"
	CollectionFailsOpen       Variant = "collection-fails-open"
	PublishFailsClosed        Variant = "publish-fails-closed"
	HydrateBeforeSeal         Variant = "hydrate-before-seal"
	AcceptUnenforcedStore     Variant = "accept-unenforced-store"
	NoSeq                     Variant = "no-seq"
	NotFoundIsRetryable       Variant = "404-is-retryable"
	NoAdoptionOnTransfer      Variant = "no-adoption-on-transfer"
	TargetIgnoresRecoveries   Variant = "target-ignores-recoveries"
	RecoveryNoRelocationCheck Variant = "recovery-no-relocation-check"
	NoRetention               Variant = "no-retention"
	TransferKeepsSource       Variant = "transfer-keeps-source"
	RevertStandsDown          Variant = "revert-stands-down"
	ResumeStaysBlocked        Variant = "resume-stays-blocked"
	TargetRefusesEmptyShard   Variant = "target-refuses-empty-shard"
	RevertRetryBlind          Variant = "revert-retry-blind"
)

// Reader says who reads a variant's switch.
type Reader string

// The readers of a variant's switch.
const (
	ReadByProtocol Reader = "protocol" // read inside this package
	ReadByCaller   Reader = "caller"   // read by the caller that orders its I/O around the fence
	ReadByClient   Reader = "client"   // read where the caller builds and accepts its store client
)

// VariantInfo describes one registered variant.
type VariantInfo struct {
	Name        Variant
	Description string
	Reader      Reader
}

var registry = []VariantInfo{
	{Correct, "the protocol as specified", ReadByProtocol},
	{NoReadoptionGuard, "M1: a guarded instance re-adopts an equal-term key whatever allocation it records (17-state trace)", ReadByProtocol},
	{CASConcurrentWithMetadata, "M2: the ack CAS is issued concurrently with the metadata PUT instead of after it (13-state trace)", ReadByCaller},
	{RestoreBeforeClaim, "M3: the restore point is read before the claim/seal", ReadByCaller},
	{NoSweep, "M4: the claim neither deletes nor checks for lower-term keys, so the old owner keeps a valid token", ReadByProtocol},
	{NoSurvivorCheck, "M5: trust DeleteObjects; the post-sweep re-list ignores a surviving lower term", ReadByProtocol},
	{NoReverify, "M6: no post-sweep re-list: neither surviving lower terms nor a newer grant are noticed", ReadByProtocol},
	{NoTermFloor, "M7: no pre-claim refusal of a higher term and no re-list: a stale grant writes its own key", ReadByProtocol},
	{ConflictIsFenced, "M8: 409 ConditionalRequestConflict is treated as a lost CAS (spurious fence)", ReadByProtocol},
	{ConflictIsSuccess, "409 ConditionalRequestConflict is treated as success: the key's current version is adopted blindly", ReadByProtocol},
	{AmbiguousIsSuccess, "M9: a write with an unknown outcome is treated as applied, without reading back", ReadByProtocol},
	{AmbiguousIsFenced, "M10: a write with an unknown outcome is treated as a lost CAS (spurious fence)", ReadByProtocol},
	{AdoptWithoutIdentity, "M11: lost-response resolution adopts whatever version is at the key, without the identity+seq check, so a refusal whose answer was lost hands an equal-term twin's chain to the loser", ReadByProtocol},
	{SDKRetries, "M12: the store client retries conditional PUTs (MaxAttempts 3), so a lost response comes back as 412 and fences", ReadByClient},
	{ReuseHalfClaimed, "M13: a claim that failed retryably keeps the token of the key it created, so a retry on the same instance (the seal retries on its one instance) skips the sweep and its verification", ReadByProtocol},
	{WithdrawArbitrated, "M16: a claim that finds its key taken mid-claim deletes it although a twin now owns it by arbitration, so the legitimate owner of the term is fenced", ReadByProtocol},
	{TargetClaimsBlindly, "M17: a guarded instance (relocation target) takes an existing key regardless of the recorded allocation", ReadByProtocol},
	{RevertWithFreshToken, "M18: revert reads the key's current ETag and presents it instead of the retained transfer ETag", ReadByProtocol},
	{RecreateOn404, "M19: equal-term arbitration re-creates a key a higher term swept instead of standing down; a copy re-creating the key it sealed writes the seal's body again, so an old ETag becomes valid again", ReadByProtocol},
	{NoSegmentGates, "M20: both segment gates always allow (publish and collection ignore supersession)", ReadByProtocol},
	{CollectionFailsOpen, "M21: the collection gate allows deletion when the fence cannot be read", ReadByProtocol},
	{PublishFailsClosed, "M22: the publish gate refuses when the fence cannot be read, so a healthy owner stops publishing", ReadByProtocol},
	{HydrateBeforeSeal, "M23: segments are hydrated before the claim/seal, while the previous owner still holds the fence", ReadByCaller},
	{AcceptUnenforcedStore, "M24: a store that does not enforce preconditions is accepted instead of refused", ReadByClient},
	{NoSeq, "M25: seq is always 0 in the content, so bodies and content-hash ETags repeat (ABA)", ReadByProtocol},
	{NotFoundIsRetryable, "M26: If-Match answered 404 (key swept) is retryable instead of fenced; a zombie retries forever", ReadByProtocol},
	{NoAdoptionOnTransfer, "a lost transfer response is not resolved by identity, only retryable: the later revert loses to its own transfer", ReadByProtocol},
	{TargetIgnoresRecoveries, "a relocation target replicates only to the recoveries it started itself, not to those its source had " +
		"started, so a copy recovering during the relocation misses the target's writes (Elasticsearch #19287, invariant 1)", ReadByCaller},
	{RecoveryNoRelocationCheck, "a recovering copy does not check, after opening its engine, whether the primary relocated since " +
		"the recovery started: the target's writes it dropped before are in no snapshot (Elasticsearch #19287, invariant 2)", ReadByCaller},
	{NoRetention, "segment collection keeps only the current reference set instead of the last N, so a single publish while a " +
		"same-term relocation target hydrates deletes a file the target listed (S23)", ReadByCaller},
	{TransferKeepsSource, "the transfer records the source's own allocation instead of the target's: after a clean handoff the target is refused the chain", ReadByProtocol},
	{RevertStandsDown, "an aborted relocation's source stands down without presenting its retained token, as if the target had taken over", ReadByProtocol},
	{ResumeStaysBlocked, "an aborted relocation's source whose revert succeeded owns the chain again but never lifts its " +
		"operation block: nothing is fenced, stood down or lost, and nothing is served", ReadByCaller},
	{TargetRefusesEmptyShard, "a relocation target takes a store with no published segment reference set (a shard that " +
		"never refreshed) for a failed hydration and gives the handoff up, although the handoff carries its source's set", ReadByCaller},
	{RevertRetryBlind, "a revert retried after an unknown outcome takes the refusal by its own landed revert for the target's " +
		"adoption and stands down: a lost revert answer and a failed read-back leave the chain with nobody serving", ReadByProtocol},
}

// Variants lists every registered variant in a stable order, Correct first.
func Variants() []VariantInfo {
	return append([]VariantInfo(nil), registry...)
}

// LookupVariant resolves a variant name; "" means Correct. An unknown name yields an error
// listing the valid ones.
func LookupVariant(name string) (Variant, error) {
	if name == "" {
		return Correct, nil
	}
	for _, v := range registry {
		if string(v.Name) == name {
			return v.Name, nil
		}
	}
	names := make([]string, len(registry))
	for i, v := range registry {
		names[i] = string(v.Name)
	}
	return "", fmt.Errorf("fence: unknown variant %q (valid: %s)", name, strings.Join(names, ", "))
}

// String returns the variant's name.
func (v Variant) String() string { return string(v) }

// Info returns the registry entry of v; ok is false for an unregistered variant.
func (v Variant) Info() (info VariantInfo, ok bool) {
	if v == "" {
		v = Correct
	}
	for _, i := range registry {
		if i.Name == v {
			return i, true
		}
	}
	return VariantInfo{}, false
}
