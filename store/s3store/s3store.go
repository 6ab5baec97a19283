package s3store

import (
	"fmt"

	"github.com/fencebench/fencebench/store"
)

// New builds the adapter named by client.
func New(client store.Client, cfg store.Config) (store.Store, error) {
	switch client {
	case store.ClientMinio:
		return NewMinio(cfg)
	case store.ClientAWS:
		return NewAWS(cfg)
	default:
		return nil, fmt.Errorf("unknown store client %q (want minio-go or aws-sdk)", client)
	}
}
