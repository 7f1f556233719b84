package file

// PageEncodings returns the type URL and message of each page's encoding
// in column i of r, for tests that check which encodings files use.
func PageEncodings(r *Reader, i int) (types []string, encodings [][]byte, err error) {
	c, err := r.column(i)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range c.Pages {
		types = append(types, p.EncodingType)
		encodings = append(encodings, p.Encoding)
	}
	return types, encodings, nil
}

// NumColumns returns the number of columns in r's file.
func NumColumns(r *Reader) int { return len(r.columnMeta) }
