package ipv6

// ICMPv6 types and codes that IPv6 input asks for (RFC 4443 sections 3.3
// and 3.4, RFC 7112 section 6). They are repeated here, not imported,
// because stack/icmpv6 builds on this package; a spec checks that both
// agree.
const (
	ICMPTimeExceeded uint8 = 3
	ICMPParamProblem uint8 = 4

	// CodeReasmTimeExceeded: Time Exceeded, fragment reassembly time
	// exceeded.
	CodeReasmTimeExceeded uint8 = 1

	// CodeErroneousHeader: Parameter Problem, erroneous header field.
	CodeErroneousHeader uint8 = 0
	// CodeUnknownNextHeader: Parameter Problem, unrecognised Next Header.
	CodeUnknownNextHeader uint8 = 1
	// CodeUnknownOption: Parameter Problem, unrecognised IPv6 option.
	CodeUnknownOption uint8 = 2
	// CodeIncompleteChain: Parameter Problem, first fragment has an
	// incomplete header chain (RFC 7112).
	CodeIncompleteChain uint8 = 3
)

// ICMPError is an ICMPv6 error that input processing asks to be sent
// about the packet it dropped. Type zero means none. Pointer is the
// offset of the offending byte from the start of the invoking packet
// (RFC 4443 section 3.4). Whether it is sent at all is for the caller to
// decide under RFC 4443 section 2.4 (stack/icmpv6.ErrorAllowed) and the
// rate limit.
type ICMPError struct {
	Type    uint8
	Code    uint8
	Pointer uint32
}

// IsZero reports whether no error is to be sent.
func (e ICMPError) IsZero() bool { return e.Type == 0 }

func paramProblem(code uint8, pointer int) ICMPError {
	return ICMPError{Type: ICMPParamProblem, Code: code, Pointer: uint32(pointer)}
}
