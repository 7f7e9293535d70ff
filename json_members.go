package main

import "fmt"

// The one duplicate-member check, and the one reader of named members.
// encoding/json keeps the last of repeated members silently; where a
// repeat could make a message mean two things (tool arguments, a
// handshake), the server refuses it (scanMembers); where it only reads an
// answer's fields, it keeps the last, as encoding/json does (scanFields).

type duplicateMemberError struct{ member string }

func (e *duplicateMemberError) Error() string { return fmt.Sprintf("duplicate member %q", e.member) }

// scanMembers validates data as one JSON object (scanObject) and stores
// each member's raw value in the slot that slot returns for its unescaped
// name, if any; a slot already filled is a *duplicateMemberError. The
// values alias data.
func scanMembers(data []byte, slot func(name []byte) *[]byte) error {
	return scanObject(data, func(key, value []byte) error {
		p := slot(key)
		if p == nil {
			return nil
		}
		if *p != nil {
			return &duplicateMemberError{member: string(key)}
		}
		*p = value
		return nil
	})
}

// scanFields validates data as one JSON object (scanObject) and stores the
// raw value of each member that fields names in its slot: of a repeated
// member, the last, as encoding/json reads it. The values alias data.
func scanFields(data []byte, fields map[string]*[]byte) error {
	return scanObject(data, func(key, value []byte) error {
		if p := fields[string(key)]; p != nil {
			*p = value
		}
		return nil
	})
}
