package table_test

import (
	"testing"

	"github.com/lancens/lancens/lance/table/tabletest"
)

// TestReadSDKWritten reads datasets the LanceDB SDK wrote in local
// directories (see tabletest.ReadSDKWritten).
func TestReadSDKWritten(t *testing.T) { tabletest.ReadSDKWritten(t, tabletest.Local) }

// TestSDKReadsGoWritten has the SDK read, index and write on top of a
// dataset Go wrote in a local directory (see tabletest.SDKReadsGoWritten).
func TestSDKReadsGoWritten(t *testing.T) { tabletest.SDKReadsGoWritten(t, tabletest.Local) }
