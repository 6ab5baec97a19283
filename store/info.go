package store

// Info identifies a store in results and reports. It holds no credentials by design: an
// environment describes its store with it, a run and a certification record it, and the
// reports show it (with any user information in Endpoint redacted).
type Info struct {
	// Endpoint is the S3 endpoint URL.
	Endpoint string `json:"endpoint,omitempty"`
	// Server is the server's version string, as far as the store reveals it.
	Server string `json:"server,omitempty"`
	// Stack is how the store was provided: "local", "containers" or "external".
	Stack string `json:"stack,omitempty"`
	// Bucket is the bucket the run used.
	Bucket string `json:"bucket,omitempty"`
	// Prefix is the key prefix the run confined itself to, when the description says so.
	Prefix string `json:"prefix,omitempty"`
}
