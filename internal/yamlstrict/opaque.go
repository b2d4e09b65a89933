package yamlstrict

import "errors"

// errKind sorts errors by what went wrong, so that Opaque can say it
// without the document's text.
type errKind int

const (
	kindOther errKind = iota
	kindSyntax
	kindEmpty
	kindAliases
	kindUnknownKey
	kindType
)

// opaqueMsg is what Opaque says of each kind.
func opaqueMsg(k errKind) string {
	switch k {
	case kindSyntax:
		return "not valid YAML"
	case kindEmpty:
		return "empty document"
	case kindAliases:
		return "too many nodes reached through aliases"
	case kindUnknownKey:
		return "unknown key"
	case kindType:
		return "a value of the wrong type or shape"
	}
	return "not a valid file of this kind"
}

// Opaque returns err with the document's text left out: an *Error keeps
// its file, line and column and says what kind of problem it is, but
// drops its key path and message, both of which can quote the document
// (an unknown key's name, the value found). It is for files a scenario
// names but whose text is not the user's to see in an error: a
// /etc/shadow given as a cost model must not print its first line. An
// error that is not an *Error is returned as it is.
func Opaque(err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	return &Error{File: e.File, Line: e.Line, Col: e.Col, kind: e.kind,
		Msg: opaqueMsg(e.kind) + " (the file's text is not shown)"}
}
